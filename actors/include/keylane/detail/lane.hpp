#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/backoff.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/handler.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class engine;

/// The actor that serialises one key's events. It owns the key's handler
/// instance and a queue; it runs one event at a time and starts the next
/// from the previous one's completion, never by blocking. Finished events
/// go to the sink in batches. When its queue runs dry it tells the
/// supervisor how many events it finished; the supervisor answers with
/// `retire` only if it forwarded no more than that, so an event in flight
/// at that moment is never lost. A failed attempt is retried at the head of
/// the queue after a backoff timer (no thread is held meanwhile), so the
/// key's later events wait and no other key does. When an event fails for
/// good, it and every event queued behind it go to the park store, in
/// order; from then on the lane parks whatever it is sent, and tells the
/// supervisor, which parks the key's events itself once the lane is gone.
/// A retired lane may be kept in the supervisor's pool and bound to another
/// key later (spawning an actor per activation costs more than the key's
/// work); it is kept only if no response handler of its last handler is
/// still pending, and tokens keep rising across keys, so nothing of the
/// previous key can reach the next. All members are touched by the actor only,
/// except `sync_thread_`, read by completions on other threads.
class lane : public caf::event_based_actor {
public:
  struct args {
    engine* eng;
    caf::actor supervisor;
    caf::actor sink;
    keylane::key k;
    std::unique_ptr<handler_base> handler;
    std::string handler_error; // why `handler` is null, if it is
    batch_ptr first;
    settings_ptr cfg; // the live settings when it started
    uint64_t activation = 0; // unique per key activation (idle notices)
  };

  lane(caf::actor_config& cfg, std::shared_ptr<args> a);

  using args_ptr = std::shared_ptr<args>;
  ~lane() override;

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.lane"; }

  /// True inside the handler's own `on_event` call on this thread.
  [[nodiscard]] bool in_sync_call() const noexcept {
    return sync_thread_.load(std::memory_order_relaxed)
           == std::this_thread::get_id();
  }

  /// True inside `on_event` of invocation `token` itself: only then may a
  /// completion write its result straight into the event. (A stale
  /// completion finished inside a later call must not touch that event.)
  [[nodiscard]] bool in_sync_call_of(uint64_t token) const noexcept {
    return in_sync_call() && token == token_ && !sync_done_;
  }

  /// A completion finished inside `on_event` (result already in place).
  void finish_sync(uint64_t token, outcome status, std::string error,
                   bool permanent) noexcept;

  /// Arms a handler timer.
  void schedule(caf::timespan delay, std::function<void()> fn);

private:
  void bind(args& a);
  void activate();
  void retire(bool keep);
  void take(batch_ptr b);
  void run();
  void invoke_current();
  void settle(outcome status, std::string error, bool permanent);
  void finish_current(outcome status, std::string error);
  void start_parking(std::string reason);
  void park(std::vector<event_ptr>& evs);
  void flush();
  void report_idle();
  void locate(uint64_t seq);
  std::string doing();

  engine* eng_;
  caf::actor supervisor_;
  caf::actor sink_;
  keylane::key key_;
  std::unique_ptr<handler_base> handler_;
  std::string broken_; // non-empty: every event fails with this reason
  const settings& policy(); // the live settings, refreshed after a reload
  settings_ptr cfg_;
  uint64_t cfg_gen_ = 0;
  size_t batch_limit_;
  jitter_rng rng_;

  std::deque<event_ptr> queue_;
  event_ptr current_;
  uint64_t token_ = 0;
  bool awaiting_ = false;  // an attempt runs, or a backoff waits
  bool backing_off_ = false;
  clock::time_point attempt_started_;
  bool resume_pending_ = false;
  bool idle_reported_ = false;
  uint64_t finished_ = 0;
  uint64_t activation_ = 0;
  batch_ptr out_;
  bool parking_ = false;
  uint64_t unpark_through_ = 0; // replayed events up to this id ended

  std::atomic<std::thread::id> sync_thread_{};
  bool sync_done_ = false;
  outcome sync_status_ = outcome::pending;
  bool sync_permanent_ = false;
  std::string sync_error_;

  uint64_t next_timer_ = 0;
  std::unordered_map<uint64_t, std::function<void()>> timers_;
};

} // namespace keylane::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::detail::lane::args_ptr)
