// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstring>
#include <functional>
#include <vector>
#include <memory>
#include <new>
#include <utility>

#include <caf/expected.hpp>

#include "keylane/codec.hpp"
#include "keylane/config.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/detail/engine.hpp"
#include "keylane/detail/inbox_item.hpp"
#include "keylane/detail/kept_event.hpp"
#include "keylane/event.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/log.hpp"
#include "keylane/park_store.hpp"
#include "keylane/reload.hpp"
#include "keylane/stats.hpp"
#include "keylane/submit_result.hpp"

namespace keylane {

namespace detail {
struct metrics_access;
} // namespace detail

/// Runs keyed events through per-key lanes: in submission order per key,
/// in parallel across keys, under the caps of `settings`.
///
/// Thread-safety: `submit` may be called from many threads at once; the
/// order of one key's events is the order their `submit` calls returned in
/// (concurrent calls for one key from different threads have no order, and
/// get one). `pull`, `try_pull`, `drain` and `stats` are thread-safe;
/// `stop` is called by the owner (a call on the runtime's own threads only
/// begins the stop: see `stop`). Outputs reach the application
/// either through the callback given to `start`, called on one consumer
/// thread, or (without a callback) through `pull`.
template <class Payload, class Result>
class runtime {
public:
  using event_type = event<Payload, Result>;

  /// True if an event of this payload type, for an integer key whose lane
  /// is live, travels to its lane by value (one cache line, nothing
  /// allocated on the submitting thread): payloads of at most 24 bytes
  /// that are trivially copyable and default constructible. Otherwise the
  /// event is built on `submit` and handed on. Either way the same order
  /// and guarantees hold.
  static constexpr bool payload_by_value =
    std::is_trivially_copyable_v<Payload>
    && std::is_default_constructible_v<Payload>
    && sizeof(Payload) <= detail::inbox_item::payload_max
    && alignof(Payload) <= alignof(uint64_t);
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
                                     std::move(out), payload_ops());
    if (!eng)
      return std::move(eng.error());
    return std::unique_ptr<runtime>{new runtime(std::move(*eng))};
  }

  /// Submits `payload` for `k`. On rejection the payload is left untouched.
  /// From the runtime's own threads (the output callback, a handler, an
  /// actor spawned in `system()`) it never waits, whatever `overflow` says:
  /// a full window or key backlog returns `window_full` or
  /// `key_backlog_full` at once, since the credit it would wait for comes
  /// back only through those threads. Handle that answer (retry from a
  /// `run_later` timer, or fail the event).
  submit_result submit(const key& k, Payload&& payload) {
    submit_context ctx{&k, &payload};
    auto make = [](void* raw) -> detail::event_ptr {
      auto* c = static_cast<submit_context*>(raw);
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
  /// Once a stop has begun (`stop()` on any thread, a handler's too), it
  /// takes what is queued and then returns false at once: the owner's
  /// `stop()` lists whatever never arrived.
  [[nodiscard]] bool pull(std::unique_ptr<event_type>& out,
                          std::chrono::nanoseconds timeout) {
    detail::event_ptr p;
    if (!eng_->pull(p, timeout))
      return false;
    out.reset(static_cast<event_type*>(p.release()));
    return true;
  }

  /// Waits until every accepted event was delivered (true), or until the
  /// rest can never be: a spill record that could not be read back, which
  /// `stop` reports, or a stop that has begun (false). False on timeout.
  /// On the runtime's own threads (the output callback, a handler, a
  /// `run_later` timer) it is refused: false at once, and an error logged,
  /// since what it would wait for needs the thread it would hold.
  [[nodiscard]] bool
  drain(std::chrono::nanoseconds timeout = std::chrono::hours(24 * 365)) {
    return eng_->drain(timeout);
  }

  /// Stops accepting, ends all lanes promptly and reports every accepted
  /// event that was not delivered. Called by the destructor if needed.
  /// On the runtime's own threads it begins the stop and returns at once
  /// with a report whose `complete` is false; the owner's `stop()` (or the
  /// destructor) finishes it and reports in full.
  stop_report stop() { return eng_->stop(); }

  // -- parked keys (operator API) ----------------------------------------------
  //
  // Thread-safe, but not against `stop()`, and not for handlers: `replay`
  // and `discard` wait for the supervisor actor, which a handler holding a
  // worker thread may keep from running.

  /// Every parked key: how many events, the first failure, when.
  [[nodiscard]] caf::expected<std::vector<parked_key>> parked_keys() const {
    return eng_->parked_keys();
  }

  /// The parked events of `k`, in their order, payloads decoded.
  [[nodiscard]] caf::expected<std::vector<parked_event<Payload>>>
  parked_events(const key& k) const {
    auto recs = eng_->parked_records(k);
    if (!recs)
      return std::move(recs.error());
    std::vector<parked_event<Payload>> out;
    out.reserve(recs->size());
    for (auto& r : *recs) {
      auto p = payload_of(r);
      if (!p)
        return std::move(p.error());
      out.push_back(parked_event<Payload>{r.id, r.seq, std::move(r.k),
                                          std::move(*p), std::move(r.reason),
                                          r.attempts, r.parked_at});
    }
    return out;
  }

  /// Runs the parked events of `k` again, in order, through a lane, ahead of
  /// any event of `k` submitted after this call. Returns how many were
  /// resubmitted (0 if `k` was not parked). They get new sequence numbers
  /// and leave the store as they succeed; if one fails for good again, it
  /// and those behind it stay parked. Returns once they are queued.
  caf::expected<uint64_t> replay(const key& k) { return eng_->replay(k); }

  /// Drops the parked events of `k` and lets its newer events run; returns
  /// how many were dropped.
  caf::expected<uint64_t> discard(const key& k) { return eng_->discard(k); }

  /// A snapshot of counters and gauges.
  [[nodiscard]] keylane::stats stats() const { return eng_->snapshot(); }

  /// The settings in force: those it started with, with every reload
  /// applied.
  [[nodiscard]] settings config() const { return *eng_->live(); }

  // -- reload ------------------------------------------------------------------

  /// Reads the config file `path` (validated as at start) and applies its
  /// run-time keys (see `reloads_at_run_time`) without losing, duplicating
  /// or reordering an event: a lowered `max_active_keys` starts no key until
  /// the live lanes fall below it (lingering lanes retire at once, running
  /// ones as they run dry); a lowered `window` holds new submits until the
  /// events in flight fall below it; retry keys apply from the next attempt.
  /// Keys that need a restart are reported and keep their running value. On
  /// a bad file the running config stays and the error says why. Both
  /// outcomes are logged. Thread-safe; reloads run one at a time.
  caf::expected<reload_report> reload(const std::string& path) {
    auto next = load(path);
    if (!next) {
      eng_->log().write(log_level::error,
                        "reload refused, running config kept: "
                          + render(next.error()));
      return std::move(next.error());
    }
    return reload(std::move(*next));
  }

  /// Applies the run-time keys of `next`, as `reload(path)` does (for
  /// servers that keep their own config and build `settings` themselves).
  caf::expected<reload_report> reload(settings next) {
    return eng_->reload(std::move(next));
  }

  /// Sends the runtime's log lines to `w` instead of stderr (an empty
  /// writer restores stderr). Thread-safe.
  void set_log_writer(log_writer w) { eng_->log().redirect(std::move(w)); }

  /// Calls `fn` with the sequence numbers of events whose changes to keyed
  /// state became durable (`[state]` with a store), on the state writer's
  /// thread, in the order the writes happened. A source that commits its
  /// input positions (Kafka) commits an event only after this: then each
  /// event changes the state exactly once across crashes. Every event that
  /// ends other than parked is reported once, stateful or not, after each
  /// of its key's earlier events; set it before submitting.
  void on_state_durable(std::function<void(const std::vector<uint64_t>&)> fn) {
    eng_->state().on_durable(std::move(fn));
  }

  /// The actor system the lanes run in; spawn the actors your handlers talk
  /// to here, and end them before the runtime stops.
  [[nodiscard]] caf::actor_system& system() noexcept { return eng_->system(); }

private:
  static caf::expected<Payload> payload_of(const parked_record& r) {
    if (r.object) {
      if constexpr (std::is_copy_constructible_v<Payload>)
        return Payload{*static_cast<const Payload*>(r.object.get())};
    }
    if constexpr (codec<Payload>::available)
      return codec<Payload>::decode(r.payload);
    return make_error(errc::codec_failed,
                      "the payload type has no keylane::codec to decode "
                      "parked bytes with");
  }

  // What `submit` hands the engine to build its event from.
  struct submit_context {
    const key* k;
    Payload* p;
  };

  static detail::payload_ops payload_ops() {
    detail::payload_ops ops;
    if constexpr (payload_by_value) {
      // By value to a live lane (detail::inbox_item): a copy leaves the
      // caller's payload as it was if `submit` refuses it.
      ops.inline_fill = [](void* ctx, void* bytes) {
        std::memcpy(bytes,
                    static_cast<const void*>(
                      static_cast<submit_context*>(ctx)->p),
                    sizeof(Payload));
      };
      ops.inline_event = [](const key& k,
                            const void* bytes) -> detail::event_ptr {
        Payload p;
        std::memcpy(static_cast<void*>(&p), bytes, sizeof(Payload));
        return detail::event_ptr{new event_type(k, std::move(p))};
      };
    }
    ops.bytes = codec<Payload>::available;
    ops.copies = std::is_copy_constructible_v<Payload>;
    ops.park = [](const detail::event_base& ev, parked_record& rec,
                  bool want_bytes) -> caf::error {
      const auto& p = static_cast<const event_type&>(ev).payload;
      if constexpr (codec<Payload>::available) {
        if (want_bytes || !std::is_copy_constructible_v<Payload>) {
          auto bytes = codec<Payload>::encode(p);
          if (!bytes)
            return std::move(bytes.error());
          rec.payload = std::move(*bytes);
          return caf::none;
        }
      }
      if constexpr (std::is_copy_constructible_v<Payload>) {
        rec.object = std::make_shared<const Payload>(p);
        return caf::none;
      }
      return make_error(errc::codec_failed,
                        "the payload type has neither a keylane::codec nor "
                        "a copy constructor");
    };
    if constexpr (codec<Payload>::available && codec<Result>::available) {
      ops.spills = true;
      ops.spill = [](const detail::event_base& ev, std::string& payload,
                     std::optional<std::string>& result) -> caf::error {
        const auto& e = static_cast<const event_type&>(ev);
        auto p = codec<Payload>::encode(e.payload);
        if (!p)
          return std::move(p.error());
        payload = std::move(*p);
        if (e.result) {
          auto r = codec<Result>::encode(*e.result);
          if (!r)
            return std::move(r.error());
          result = std::move(*r);
        }
        return caf::none;
      };
      ops.unspill = [](const key& k, std::string_view payload,
                       const std::optional<std::string>& result)
        -> caf::expected<detail::event_ptr> {
        auto p = codec<Payload>::decode(payload);
        if (!p)
          return std::move(p.error());
        std::unique_ptr<event_type> e{new event_type(k, std::move(*p))};
        if (result) {
          auto r = codec<Result>::decode(*result);
          if (!r)
            return std::move(r.error());
          e->result = std::move(*r);
        }
        return detail::event_ptr{e.release()};
      };
    }
    if constexpr (codec<Payload>::available) {
      using kept = detail::kept_event<Payload, Result>;
      ops.encode_message = [](const detail::event_base& ev) {
        return codec<Payload>::encode(
          static_cast<const event_type&>(ev).payload);
      };
      ops.keep_message = [](detail::event_base& ev,
                            detail::message_origin o) -> detail::event_ptr {
        auto& e = static_cast<event_type&>(ev);
        return detail::event_ptr{
          new kept(e.k, std::move(e.payload), std::move(o))};
      };
      ops.revive_message = [](const key& to, std::string_view payload,
                              detail::message_origin o)
        -> caf::expected<detail::event_ptr> {
        auto p = codec<Payload>::decode(payload);
        if (!p)
          return std::move(p.error());
        return detail::event_ptr{new kept(to, std::move(*p), std::move(o))};
      };
    }
    ops.revive = [](const parked_record& r)
      -> caf::expected<detail::event_ptr> {
      auto p = payload_of(r);
      if (!p)
        return std::move(p.error());
      return detail::event_ptr{new event_type(r.k, std::move(*p))};
    };
    return ops;
  }

  explicit runtime(std::unique_ptr<detail::engine> eng)
    : eng_(std::move(eng)) {}
  // keylane/metrics.hpp reads the engine's gate (keylane::metrics).
  friend struct detail::metrics_access;

  std::unique_ptr<detail::engine> eng_;
};

} // namespace keylane
