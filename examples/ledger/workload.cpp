// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <random>
#include <stdexcept>
#include <utility>

namespace ledger {

namespace {

// Uniform in [lo, hi]. `std::uniform_int_distribution` differs between
// standard libraries; mt19937_64's raw output does not. The modulo bias is
// below 1e-15 for the ranges used here.
uint64_t uniform(std::mt19937_64& rng, uint64_t lo, uint64_t hi) {
  return lo + rng() % (hi - lo + 1);
}

// One account's events in order: open, deposits and withdrawals that never
// overdraw, close.
void append_account(std::vector<ledger_event>& out, uint32_t account,
                    uint32_t count, const workload_spec& spec,
                    std::mt19937_64& rng) {
  int64_t balance = 0;
  for (uint32_t i = 0; i < count; ++i) {
    ledger_event ev;
    ev.account = account;
    ev.index = i;
    if (i == 0) {
      ev.kind = event_kind::open;
    } else if (i + 1 == count) {
      ev.kind = event_kind::close;
    } else if (balance > 0 && uniform(rng, 0, 99) < 40) {
      ev.kind = event_kind::withdraw;
      ev.amount = static_cast<int64_t>(
        uniform(rng, 1, static_cast<uint64_t>(balance)));
      balance -= ev.amount;
    } else {
      ev.kind = event_kind::deposit;
      ev.amount = static_cast<int64_t>(uniform(rng, 1, 100));
      balance += ev.amount;
    }
    ev.latency = std::chrono::microseconds{static_cast<int64_t>(
      uniform(rng, static_cast<uint64_t>(spec.min_latency.count()),
              static_cast<uint64_t>(spec.max_latency.count())))};
    out.push_back(ev);
  }
}

} // namespace

const char* to_string(event_kind x) noexcept {
  switch (x) {
    case event_kind::open:
      return "open";
    case event_kind::deposit:
      return "deposit";
    case event_kind::withdraw:
      return "withdraw";
    case event_kind::close:
      return "close";
  }
  return "?";
}

std::string account_name(uint32_t n) {
  return "acct-" + std::to_string(n);
}

workload make_workload(const workload_spec& spec) {
  if (spec.accounts < 2)
    throw std::invalid_argument("workload: accounts < 2");
  if (spec.hot_events < 2)
    throw std::invalid_argument("workload: hot_events < 2");
  if (spec.cold_events < 2 * (spec.accounts - 1))
    throw std::invalid_argument("workload: cold_events < 2 per cold account");
  if (spec.min_latency.count() < 0 || spec.max_latency < spec.min_latency)
    throw std::invalid_argument("workload: bad latency range");

  workload w;
  w.spec = spec;
  std::mt19937_64 rng{spec.seed};

  // Events per account: the hot one, then the cold share spread evenly.
  const uint32_t cold = spec.accounts - 1;
  w.events_per_account.push_back(spec.hot_events);
  for (uint32_t i = 0; i < cold; ++i)
    w.events_per_account.push_back(spec.cold_events / cold
                                   + (i < spec.cold_events % cold ? 1 : 0));

  // Each account's stream, in order.
  std::vector<std::vector<ledger_event>> streams(spec.accounts);
  for (uint32_t a = 0; a < spec.accounts; ++a) {
    w.names.push_back(account_name(a));
    append_account(streams[a], a, w.events_per_account[a], spec, rng);
  }

  // A uniformly random interleaving: shuffle one slot per event (Fisher-
  // Yates), then give each slot its account's next event.
  std::vector<uint32_t> slots;
  for (uint32_t a = 0; a < spec.accounts; ++a)
    slots.insert(slots.end(), w.events_per_account[a], a);
  for (size_t i = slots.size(); i > 1; --i)
    std::swap(slots[i - 1], slots[uniform(rng, 0, i - 1)]);
  std::vector<size_t> next(spec.accounts, 0);
  w.events.reserve(slots.size());
  for (auto a : slots)
    w.events.push_back(streams[a][next[a]++]);
  return w;
}

} // namespace ledger
