// SPDX-License-Identifier: Apache-2.0
#pragma once

// Keyed-state fixtures: a state that is a fold of a key's events (any
// lost, repeated, reordered or torn change shows in it), a handler that
// folds with random timing and failures, and a temporary directory.

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include <caf/meta/type_name.hpp>

#include "keylane/detail/state_record.hpp"
#include "keylane/runtime.hpp"
#include "keylane/stateful_handler.hpp"
#include "temp_dir.hpp"

namespace state_test {

namespace fs = std::filesystem;

/// The fold of a key's events: how many, and an order-sensitive hash.
struct fold {
  uint64_t count = 0;
  uint64_t hash = 0;

  void apply(uint64_t value) noexcept {
    ++count;
    hash = (hash ^ value) * 0x100000001b3ULL + count;
  }
  friend bool operator==(const fold& x, const fold& y) noexcept {
    return x.count == y.count && x.hash == y.hash;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fold& x) {
  return f(caf::meta::type_name("fold"), x.count, x.hash);
}

/// What the folding handler does with an event, from the event's value:
/// the low bits pick its fate, the rest is the value folded.
enum class act : uint64_t {
  now = 0,        // fold and complete inside on_event
  later = 1,      // fold, complete from a run_later timer
  fold_fail = 2,  // fold, then fail the first attempt (rollback must undo)
  throw_once = 3, // fold, then throw on the first attempt
};

inline uint64_t make_value(uint64_t body, act a) {
  return (body << 2) | static_cast<uint64_t>(a);
}

inline act act_of(uint64_t v) { return static_cast<act>(v & 3); }

/// Folds every event into the key's state and answers the state's hash;
/// its failed attempts are undone by `by` (with `journal`, the handler's
/// undo step puts the fold back; `copy` ignores the step).
struct folding : keylane::stateful_handler<uint64_t, uint64_t, fold> {
  explicit folding(keylane::rollback_by by = keylane::rollback_by::copy)
    : stateful_handler(by) {}

  void on_event(uint64_t& v, keylane::completion<uint64_t> done) override {
    undo([before = state()](fold& s) { s = before; });
    state().apply(v);
    auto a = act_of(v);
    if ((a == act::fold_fail || a == act::throw_once) && first_try(v)) {
      if (a == act::throw_once)
        throw std::runtime_error("planned");
      done.fail("planned failure after the state changed");
      return;
    }
    if (a == act::later) {
      run_later(std::chrono::microseconds(50),
                [this, d = std::move(done)]() mutable { d.ok(state().hash); });
      return;
    }
    done.ok(state().hash);
  }

  // Each value is unique per key, so "first attempt" is the first sight.
  bool first_try(uint64_t v) {
    if (v == last_failed_)
      return false;
    last_failed_ = v;
    return true;
  }
  uint64_t last_failed_ = ~uint64_t{0};
};

using test_support::temp_dir;

/// The fold a state record holds.
inline fold decoded(const keylane::detail::state_record& rec) {
  auto f = keylane::codec<fold>::decode(rec.state);
  REQUIRE(f);
  return *f;
}

inline uint64_t seed() {
  if (auto* s = std::getenv("KEYLANE_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

} // namespace state_test
