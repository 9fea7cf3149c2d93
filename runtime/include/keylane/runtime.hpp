#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <new>
#include <utility>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/engine.hpp"
#include "keylane/event.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/stats.hpp"
#include "keylane/submit_result.hpp"

namespace keylane {

/// Runs keyed events through per-key lanes: in submission order per key,
/// in parallel across keys, under the caps of `settings`.
///
/// Thread-safety: `submit` may be called from many threads at once; the
/// order of one key's events is the order their `submit` calls returned in
/// (concurrent calls for one key from different threads have no order, and
/// get one). `pull`, `try_pull`, `drain` and `stats` are thread-safe;
/// `stop` is called once, by the owner. Outputs reach the application
/// either through the callback given to `start`, called on one consumer
/// thread, or (without a callback) through `pull`.
template <class Payload, class Result>
class runtime {
public:
  using event_type = event<Payload, Result>;
  using callback = std::function<void(event_type&)>;

  /// Starts a runtime whose handler is `cfg.handler`, looked up in `reg`.
  [[nodiscard]] static caf::expected<std::unique_ptr<runtime>>
  start(settings cfg, const handler_registry& reg, callback on_output = {}) {
    auto make = reg.find<Payload, Result>(cfg.handler);
    if (!make)
      return std::move(make.error());
    return start(std::move(cfg), std::move(*make), std::move(on_output));
  }

  /// Starts a runtime with an explicit handler factory.
  [[nodiscard]] static caf::expected<std::unique_ptr<runtime>>
  start(settings cfg, handler_factory make, callback on_output = {}) {
    detail::engine::output_fn out;
    if (on_output)
      out = [f = std::move(on_output)](detail::event_base& e) {
        f(static_cast<event_type&>(e));
      };
    auto eng = detail::engine::start(std::move(cfg), std::move(make),
                                     std::move(out));
    if (!eng)
      return std::move(eng.error());
    return std::unique_ptr<runtime>{new runtime(std::move(*eng))};
  }

  /// Submits `payload` for `k`. On rejection the payload is left untouched.
  submit_result submit(const key& k, Payload&& payload) {
    struct context {
      const key* k;
      Payload* p;
    } ctx{&k, &payload};
    auto make = [](void* raw) -> detail::event_ptr {
      auto* c = static_cast<context*>(raw);
      return detail::event_ptr{new event_type(*c->k, std::move(*c->p))};
    };
    auto res = eng_->submit(k, make, &ctx);
    if (res.code != errc::none)
      return submit_result::rejected(res.code);
    return submit_result::accepted(res.seq);
  }

  /// Submits a copy of `payload` for `k`.
  submit_result submit(const key& k, const Payload& payload) {
    Payload copy{payload};
    return submit(k, std::move(copy));
  }

  /// Takes one output without waiting (only without a callback).
  [[nodiscard]] bool try_pull(std::unique_ptr<event_type>& out) {
    detail::event_ptr p;
    if (!eng_->try_pull(p))
      return false;
    out.reset(static_cast<event_type*>(p.release()));
    return true;
  }

  /// Takes one output, waiting up to `timeout` (only without a callback).
  [[nodiscard]] bool pull(std::unique_ptr<event_type>& out,
                          std::chrono::nanoseconds timeout) {
    detail::event_ptr p;
    if (!eng_->pull(p, timeout))
      return false;
    out.reset(static_cast<event_type*>(p.release()));
    return true;
  }

  /// Waits until every accepted event was delivered; false on timeout.
  [[nodiscard]] bool
  drain(std::chrono::nanoseconds timeout = std::chrono::hours(24 * 365)) {
    return eng_->drain(timeout);
  }

  /// Stops accepting, ends all lanes promptly and reports every accepted
  /// event that was not delivered. Called by the destructor if needed.
  stop_report stop() { return eng_->stop(); }

  /// A snapshot of counters and gauges.
  [[nodiscard]] keylane::stats stats() const { return eng_->snapshot(); }

  /// The settings in force.
  [[nodiscard]] const settings& config() const noexcept {
    return eng_->config();
  }

  /// The actor system the lanes run in; spawn the actors your handlers talk
  /// to here, and end them before the runtime stops.
  [[nodiscard]] caf::actor_system& system() noexcept { return eng_->system(); }

private:
  explicit runtime(std::unique_ptr<detail::engine> eng)
    : eng_(std::move(eng)) {}
  std::unique_ptr<detail::engine> eng_;
};

} // namespace keylane
