// SPDX-License-Identifier: Apache-2.0
#pragma once

// The ledger workload: accounts opened, deposited to, withdrawn from and
// closed, interleaved at random, each event with its own simulated database
// latency. Deterministic from a seed, so every way sees identical events.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace ledger {

/// What an event does to its account.
enum class event_kind : uint8_t { open, deposit, withdraw, close };

/// Returns "open", "deposit", "withdraw" or "close".
[[nodiscard]] const char* to_string(event_kind x) noexcept;

/// One account event.
struct ledger_event {
  /// Account number; its name (and keylane key) is `account_name(account)`.
  uint32_t account = 0;
  /// Position of this event among its account's events, from 0.
  uint32_t index = 0;
  /// What it does.
  event_kind kind = event_kind::open;
  /// Amount moved by a deposit or withdrawal; 0 otherwise.
  int64_t amount = 0;
  /// The simulated database round trip this event costs.
  std::chrono::microseconds latency{0};
};

/// Visits the fields of `x` for CAF's serializers, so keylane's default
/// codec can park events in a durable store (`park.store = "sqlite"`).
/// It sits next to the type on purpose: every file that instantiates
/// `keylane::runtime<ledger_event, ...>` must see it, or the instantiations
/// disagree about whether the type has a codec.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ledger_event& x) {
  return f(caf::meta::type_name("ledger_event"), x.account, x.index, x.kind,
           x.amount, x.latency);
}

/// The shape of a workload.
struct workload_spec {
  /// Seed of every random choice.
  uint64_t seed = 42;
  /// Number of accounts; account 0 is the hot one.
  uint32_t accounts = 40;
  /// Events of the hot account.
  uint32_t hot_events = 200;
  /// Events shared by the cold accounts (spread evenly, at least 2 each).
  uint32_t cold_events = 200;
  /// Shortest and longest database round trip, drawn uniformly.
  std::chrono::microseconds min_latency{1000};
  std::chrono::microseconds max_latency{4000};
};

/// A generated workload: the events in submission order.
struct workload {
  workload_spec spec;
  /// Every event, in the order the ways submit them; each account's events
  /// appear in index order.
  std::vector<ledger_event> events;
  /// Account names, "acct-0" .. "acct-<n-1>", indexed by account number.
  std::vector<std::string> names;
  /// Events per account, indexed by account number.
  std::vector<uint32_t> events_per_account;
};

/// The account number of the hot account.
inline constexpr uint32_t hot_account = 0;

/// Returns "acct-<n>".
[[nodiscard]] std::string account_name(uint32_t n);

/// Generates a workload. Each account's events are open, then deposits and
/// withdrawals that never overdraw when applied in order, then close; the
/// accounts' streams are interleaved uniformly at random. Uses its own
/// generator arithmetic (not `std::uniform_int_distribution` or
/// `std::shuffle`), so a seed yields the same workload with every standard
/// library.
[[nodiscard]] workload make_workload(const workload_spec& spec);

} // namespace ledger
