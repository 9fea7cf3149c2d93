// SPDX-License-Identifier: Apache-2.0
// How a failed attempt's changes to keyed state are taken back: by a copy
// of the whole state before every attempt (rollback_by::copy), or by the
// undo steps the handler records (rollback_by::journal), which copy
// nothing, so an event that succeeds costs what it changed.

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "state_support.hpp"

using namespace std::chrono_literals;
namespace kl = keylane;

namespace {

std::atomic<uint64_t> copies{0};

// A large state as a user keeps one (a map of entries), that counts its
// copies.
struct ledger_state {
  std::map<uint64_t, int64_t> entries;

  ledger_state() = default;
  ledger_state(const ledger_state& x) : entries(x.entries) { ++copies; }
  ledger_state(ledger_state&&) noexcept = default;
  ledger_state& operator=(const ledger_state& x) {
    entries = x.entries;
    ++copies;
    return *this;
  }
  ledger_state& operator=(ledger_state&&) noexcept = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ledger_state& x) {
  return f(caf::meta::type_name("ledger_state"), x.entries);
}

using rt_type = kl::runtime<uint64_t, int64_t>;

// Adds 1 to entry `v % 1000`; an event whose value is odd fails its first
// attempt after the change (and, if `recorded`, after recording its undo).
struct adding : kl::stateful_handler<uint64_t, int64_t, ledger_state> {
  adding(kl::rollback_by by, bool recorded)
    : stateful_handler(by), recorded_(recorded) {}

  void on_event(uint64_t& v, kl::completion<int64_t> done) override {
    auto at = v % 1000;
    auto& entries = state().entries;
    auto it = entries.find(at);
    if (recorded_) {
      if (it == entries.end())
        undo([at](ledger_state& s) { s.entries.erase(at); });
      else
        undo([at, old = it->second](ledger_state& s) {
          s.entries[at] = old;
        });
    }
    auto now = ++entries[at];
    if (v % 2 == 1 && tried_.insert(v).second) {
      done.fail("planned, after the change");
      return;
    }
    done.ok(now);
  }

  bool recorded_;
  std::set<uint64_t> tried_;
};

struct run_result {
  uint64_t copies = 0;
  std::vector<std::string> outs; // "ok 2": each output's outcome, result
};

run_result run(kl::rollback_by by, bool recorded, bool rollback,
               const std::vector<uint64_t>& values) {
  kl::settings s;
  s.threads = 2;
  s.order = kl::order_mode::per_key;
  s.state_store = kl::state_backend::memory;
  s.state_rollback = rollback;
  s.max_attempts = 2;
  s.initial_backoff_ms = 0;
  s.max_backoff_ms = 0;
  std::mutex mtx;
  run_result r;
  {
    auto rt = rt_type::start(
      s,
      [by, recorded](const kl::handler_params&) {
        return std::make_unique<adding>(by, recorded);
      },
      [&](rt_type::event_type& ev) {
        std::lock_guard<std::mutex> guard{mtx};
        r.outs.push_back(std::string{kl::to_string(ev.status)} + " "
                         + (ev.result ? std::to_string(*ev.result) : "-"));
      });
    REQUIRE(rt);
    copies = 0;
    for (auto v : values)
      REQUIRE((*rt)->submit(kl::key{uint64_t{7}}, uint64_t{v}));
    REQUIRE((*rt)->drain(10s));
    r.copies = copies.load();
    (*rt)->stop();
  }
  return r;
}

} // namespace

TEST_CASE("rollback by journal copies no state, where rollback by copy "
          "copies it for every attempt", "[state][rollback]") {
  std::vector<uint64_t> values;
  for (uint64_t i = 0; i < 200; ++i)
    values.push_back(2 * i); // even: every event succeeds at once
  auto by_copy = run(kl::rollback_by::copy, true, true, values);
  auto by_journal = run(kl::rollback_by::journal, true, true, values);
  CHECK(by_copy.copies >= values.size());
  CHECK(by_journal.copies == 0);
  CHECK(by_copy.outs == by_journal.outs);
}

TEST_CASE("rollback by journal takes back a failed attempt's recorded "
          "changes, latest first, and only those", "[state][rollback]") {
  // Odd values fail their first attempt after their change; entries 1 and
  // 3 are changed by two events each: each retry starts from the state
  // before its event.
  std::vector<uint64_t> values{1, 3, 1001, 3 + 1000};
  std::vector<std::string> expected{"ok 1", "ok 1", "ok 2", "ok 2"};
  CHECK(run(kl::rollback_by::journal, true, true, values).outs == expected);
  CHECK(run(kl::rollback_by::copy, false, true, values).outs == expected);
  // Unrecorded, a journal has nothing to take back: each failed attempt's
  // change stays, as with state.rollback = false.
  std::vector<std::string> kept{"ok 2", "ok 2", "ok 4", "ok 4"};
  CHECK(run(kl::rollback_by::journal, false, true, values).outs == kept);
  CHECK(run(kl::rollback_by::journal, true, false, values).outs == kept);
}
