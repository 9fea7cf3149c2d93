// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "keylane/handler.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

/// A pipeline stage's payload: the stage's input with the pipeline's
/// sequence number and the event's key, which survive every stage.
template <class T>
struct staged {
  uint64_t seq = 0;
  keylane::key k;
  T value;
};

/// Runs a user's `handler<A, B>` as a stage's `handler<staged<A>, B>`: the
/// user's handler sees its own input type, the event's key as
/// `current_key()` (in an `unordered` stage, too, where the lane's key is
/// the sequence number), and the lane as `self()`.
template <class A, class B>
class stage_adapter final : public handler<staged<A>, B> {
public:
  /// `lifecycle`: forward `on_activate` and `on_retire` (keyed stages; an
  /// unordered stage's lanes last one event and serve no key).
  stage_adapter(std::unique_ptr<handler<A, B>> inner, bool lifecycle)
    : inner_(std::move(inner)), lifecycle_(lifecycle) {}

  void on_activate(const key& k) override {
    inner_->self_ = this->self();
    inner_->lane_ = this->lane_;
    inner_->key_ = &this->current_key();
    if (lifecycle_)
      inner_->on_activate(k);
  }

  void on_retire(const key& k) override {
    if (lifecycle_)
      inner_->on_retire(k);
  }

  void on_event(staged<A>& in, completion<B> done) override {
    inner_->self_ = this->self();
    inner_->lane_ = this->lane_;
    // The payload outlives the event's handler call and completion.
    inner_->key_ = &in.k;
    inner_->on_event(in.value, std::move(done));
  }

private:
  std::unique_ptr<handler<A, B>> inner_;
  bool lifecycle_;
};

} // namespace keylane::detail
