// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one place keylane reads CAF's internals. A lane's handler makes CAF
// requests from its shard's actor; when the lane retires or an attempt
// times out, the shard must drop the response handlers of that lane's
// requests, or a late answer would run a handler of a lane that is gone.
// CAF 0.17.6 offers no API for either step: which request number a
// request got, and the table of pending response handlers, are protected
// members of `local_actor` and `scheduled_actor`. This header reaches them
// through a member pointer taken in a class derived from `scheduled_actor`
// (the access a derived class has), so the rest of the code names neither.
//
// It relies on CAF 0.17.6's layout (Debian's libcaf-dev 0.17.6):
// `local_actor::last_request_id_` is the `message_id` of the newest request
// (`new_request_id` increments it), and
// `scheduled_actor::multiplexed_responses_` maps the `message_id` of each
// pending `request(...).then(...)` to its handler. A CAF with another
// version, or with these members renamed or retyped, stops the build here;
// tests/caf_internals_test.cpp checks at run time that the numbers read
// here are the ones CAF gives requests.

#include <cstdint>
#include <type_traits>

#include <caf/behavior.hpp>
#include <caf/config.hpp>
#include <caf/detail/unordered_flat_map.hpp>
#include <caf/local_actor.hpp>
#include <caf/message_id.hpp>
#include <caf/scheduled_actor.hpp>

static_assert(CAF_VERSION == 1706,
              "keylane/detail/caf_internals.hpp reads CAF 0.17.6's "
              "protected members: check them against this CAF version "
              "and update the adapter and this assertion");

namespace keylane::detail {

/// Access to the CAF internals the shard needs (see the file comment).
/// Never instantiated; its functions take any scheduled actor.
/// Thread-safety: an actor's own state, so only on that actor's thread.
class caf_internals : private caf::scheduled_actor {
public:
  /// The pending response handlers of `request(...).then(...)`.
  using response_map
    = caf::detail::unordered_flat_map<caf::message_id, caf::behavior>;

  static_assert(std::is_same_v<decltype(last_request_id_), caf::message_id>,
                "CAF's local_actor::last_request_id_ is no longer a "
                "message_id: request_mark would read garbage");
  static_assert(std::is_same_v<decltype(multiplexed_responses_), response_map>,
                "CAF's scheduled_actor::multiplexed_responses_ changed "
                "type: drop_responses would not find the handlers");

  /// The number of `self`'s newest request (0 before the first).
  [[nodiscard]] static uint64_t
  last_request_number(const caf::local_actor& self) noexcept {
    return number(self.*(&caf_internals::last_request_id_));
  }

  /// The response handlers `self` waits to run, by request id.
  [[nodiscard]] static response_map&
  pending_responses(caf::scheduled_actor& self) noexcept {
    return self.*(&caf_internals::multiplexed_responses_);
  }

  /// A request id's number, without its priority and response flags.
  [[nodiscard]] static uint64_t number(const caf::message_id& mid) noexcept {
    return mid.integer_value() & caf::message_id::request_id_mask;
  }

private:
  caf_internals() = delete;
};

} // namespace keylane::detail
