// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace keylane::detail {

/// A move-only `void()` callable: what `run_later` keeps until its timer
/// fires. Unlike `std::function` it takes callables that own move-only
/// state, such as a lambda holding a `completion`. Not for concurrent use.
class unique_function {
public:
  unique_function() noexcept = default;

  template <class F,
            class = std::enable_if_t<
              !std::is_same_v<std::decay_t<F>, unique_function>
              && std::is_invocable_v<std::decay_t<F>&>>>
  unique_function(F&& f) // NOLINT: implicit, like std::function
    : impl_(std::make_unique<model<std::decay_t<F>>>(std::forward<F>(f))) {}

  unique_function(unique_function&&) noexcept = default;
  unique_function& operator=(unique_function&&) noexcept = default;

  /// True if it holds a callable.
  explicit operator bool() const noexcept { return impl_ != nullptr; }

  /// Calls the held callable (which may change its own state: a `mutable`
  /// lambda may finish the completion it holds).
  void operator()() { impl_->call(); }

private:
  struct concept_t {
    virtual ~concept_t() = default;
    virtual void call() = 0;
  };
  template <class F>
  struct model final : concept_t {
    explicit model(F&& x) : f(std::move(x)) {}
    explicit model(const F& x) : f(x) {}
    void call() override { f(); }
    F f;
  };
  std::unique_ptr<concept_t> impl_;
};

} // namespace keylane::detail
