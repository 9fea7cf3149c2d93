// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/send.hpp>

#include "keylane/detail/messages.hpp"
#include "keylane/detail/result_box.hpp"
#include "keylane/errc.hpp"
#include "keylane/event.hpp"

namespace keylane::detail {

/// Where an ask's answer goes: the asking lane, in its shard.
struct ask_route {
  caf::actor shard;
  uint64_t lane = 0;
  uint64_t ask = 0;
};

/// The event an `ask` sends: a plain event of the target key that, when it
/// ends (`messaging::ended`), answers its asker with a copy of its result
/// (the result also goes to the output, as every event's does).
template <class Payload, class Result>
struct asked_event final : event<Payload, Result>, ask_route {
  asked_event(keylane::key k, Payload p)
    : event<Payload, Result>(std::move(k), std::move(p)) {
    this->flags = event_flags::asked;
  }

  void answer() noexcept override {
    try {
      result_box_ptr box;
      if (this->status == outcome::ok && this->result)
        box = std::make_shared<typed_result_box<Result>>(*this->result);
      caf::anon_send(shard, answer_atom::value, lane, ask,
                     static_cast<uint8_t>(this->status), this->error,
                     std::move(box));
    } catch (...) {
      // No memory for the answer: the asker's timeout ends its wait.
    }
  }
};

/// What an asking lane keeps until its ask is answered or times out.
class ask_waiter {
public:
  virtual ~ask_waiter() = default;
  /// The answer: `code` none with the result in `box`, or the error.
  virtual void answer(errc code, std::string message, result_box* box) = 0;
};

/// An `ask_waiter` that calls `F` with a `caf::expected<Result>`.
template <class Result, class F>
class typed_ask_waiter final : public ask_waiter {
public:
  explicit typed_ask_waiter(F f) : f_(std::move(f)) {}

  void answer(errc code, std::string message, result_box* box) override {
    if (code == errc::none && box != nullptr) {
      f_(caf::expected<Result>{
        std::move(static_cast<typed_result_box<Result>*>(box)->value)});
      return;
    }
    f_(caf::expected<Result>{make_error(code, std::move(message))});
  }

private:
  F f_;
};

} // namespace keylane::detail
