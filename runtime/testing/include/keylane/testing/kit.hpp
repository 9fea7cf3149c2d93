// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <algorithm>
#include <set>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/timespan.hpp>

#include "keylane/codec.hpp"
#include "keylane/config.hpp"
#include "keylane/detail/backoff.hpp"
#include "keylane/detail/completion_core.hpp"
#include "keylane/detail/handler_host.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/detail/state_slot.hpp"
#include "keylane/errc.hpp"
#include "keylane/event.hpp"
#include "keylane/handler.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/key.hpp"
#include "keylane/outcome.hpp"
#include "keylane/testing/detail/kit_core.hpp"
#include "keylane/testing/sent_message.hpp"

namespace keylane::testing {

/// Runs handlers of one runtime's types as the runtime would — one
/// instance per key, built from the factory (or registry name) with the
/// `[handler.<name>]` table of `settings::params`, its keyed state loaded
/// before `on_activate`, one event at a time per key, retries with backoff
/// and parking per `[retry]` and `[park]`, rollback of keyed state, retire
/// after `lane_linger_ms` — all in the calling thread, on a clock that
/// moves only in `advance`. Every `tell`, `ask` and `tell_after` is
/// recorded (`sent`); those for keys the test `stub`s are not delivered,
/// and the test answers their asks. Nothing happens until the test calls
/// `run_until_idle` or `advance`. Not thread-safe: one test thread.
template <class Payload, class Result>
class kit {
public:
  static_assert(std::is_copy_constructible_v<Payload>,
                "the kit records a copy of every message: Payload must be "
                "copy-constructible");

  using event_type = event<Payload, Result>;
  using duration = std::chrono::nanoseconds;

  /// A kit whose keys' handlers `make` builds, under `cfg` (the runtime's
  /// defaults unless given).
  explicit kit(handler_factory make, settings cfg = {})
    : cfg_(std::move(cfg)), make_(std::move(make)),
      core_([this](uint64_t lane, uint64_t token, outcome status,
                   bool permanent, std::string error,
                   keylane::detail::result_box_ptr box) {
        on_complete(lane, token, status, permanent, std::move(error),
                    std::move(box));
      }) {
    if (!make_)
      throw std::invalid_argument("keylane::testing::kit: no handler factory");
  }

  /// A kit for the handler registered as `name` in `reg`.
  kit(const handler_registry& reg, const std::string& name, settings cfg = {})
    : kit(find(reg, name), std::move(cfg)) {}

  ~kit() {
    // Handlers may hold completions and actors: drop them while the
    // actor system still runs.
    lanes_.clear();
    asks_.clear();
  }

  kit(const kit&) = delete;
  kit& operator=(const kit&) = delete;

  // -- events ---------------------------------------------------------------

  /// Queues `payload` for `k`, behind `k`'s queued events, as `submit`
  /// would; returns the event's id. It runs at the next `run_until_idle`.
  uint64_t submit(const key& k, Payload payload) {
    return enqueue(keylane::detail::event_ptr{
      new event_type(k, std::move(payload))});
  }

  /// How event `id` ended so far (`outcome::pending` while it waits, runs
  /// or backs off).
  [[nodiscard]] outcome status(uint64_t id) const { return ev(id).status; }

  /// Event `id`'s result (set when it ended ok).
  [[nodiscard]] const std::optional<Result>& result(uint64_t id) const {
    return ev(id).result;
  }

  /// Why event `id` failed or parked (the last attempt's reason).
  [[nodiscard]] const std::string& error(uint64_t id) const {
    return ev(id).error;
  }

  /// Attempts the handler made at event `id`.
  [[nodiscard]] uint32_t attempts(uint64_t id) const {
    return ev(id).attempts;
  }

  /// Event `id`'s key.
  [[nodiscard]] const key& key_of(uint64_t id) const { return ev(id).k; }

  /// Event `id`'s payload (the handler may have changed it).
  [[nodiscard]] const Payload& payload(uint64_t id) const {
    return ev(id).payload;
  }

  /// The events that ended, in the order they ended (the output's order).
  [[nodiscard]] const std::vector<uint64_t>& ended() const noexcept {
    return ended_;
  }

  // -- time -----------------------------------------------------------------

  /// Runs everything that can run without the clock moving: queued
  /// events, completions, answers, the handlers' actors.
  void run_until_idle() {
    for (;;) {
      bool moved = core_.run_actors() > 0;
      core_.within([this, &moved] {
        // By index and by copy: a handler's tell may start a lane meanwhile.
        for (size_t n = 0; n < order_.size(); ++n) {
          auto i = lanes_.find(std::string{order_[n]});
          if (i != lanes_.end() && start_next(*i->second))
            moved = true;
        }
      });
      if (!moved)
        break;
    }
    for (auto& [k, l] : lanes_)
      note_dry(*l);
  }

  /// Moves the clock by `d`: `run_later` and `tell_after` timers, attempt
  /// timeouts, retry backoffs, ask timeouts and lingers due on the way
  /// fire at their times, in due order, each followed by `run_until_idle`.
  void advance(duration d) {
    run_until_idle();
    core_.advance(d, [this] { run_until_idle(); });
  }

  /// Time on the test's clock since the kit started.
  [[nodiscard]] duration now() const noexcept { return core_.now(); }

  /// The test's clock as handlers see it (`handler_base::now`, a
  /// completion's deadline): the kit starts at `epoch`.
  [[nodiscard]] std::chrono::steady_clock::time_point clock_now() const {
    return epoch + std::chrono::duration_cast<
                     std::chrono::steady_clock::duration>(core_.now());
  }

  /// Where the test's clock starts, as a steady-clock time (not zero, so
  /// a handler's "unset" time point is never a time of the test).
  static constexpr std::chrono::steady_clock::time_point epoch{
    std::chrono::hours(1)};

  /// Timers (of every kind) that have not fired.
  [[nodiscard]] size_t pending_timers() const noexcept {
    return core_.pending_timers();
  }

  // -- messages -------------------------------------------------------------

  /// Messages to `k` are recorded but not delivered; the test answers its
  /// asks (`answer`, `fail_ask`) or lets them time out.
  void stub(const key& k) { stubs_.push_back(k); }

  /// Every message that left a handler, in the order it left.
  [[nodiscard]] const std::vector<sent_message<Payload>>& sent() const {
    return sent_;
  }

  /// Answers ask `msg` (to a stubbed key) with `value`: the asker's
  /// `on_answer` runs now, then what it started (`run_until_idle`). False
  /// if that ask is not waiting.
  bool answer(uint64_t msg, Result value) {
    bool found = false;
    core_.within([&] {
      found = answer_ask(msg, errc::none, {},
                         std::make_shared<
                           keylane::detail::typed_result_box<Result>>(
                           std::move(value)));
    });
    run_until_idle();
    return found;
  }

  /// Fails ask `msg` (to a stubbed key): the asker gets
  /// `errc::ask_failed`, as when the target event fails or parks.
  bool fail_ask(uint64_t msg, std::string reason = "failed by the test") {
    bool found = false;
    core_.within([&] {
      found = answer_ask(msg, errc::ask_failed, std::move(reason), nullptr);
    });
    run_until_idle();
    return found;
  }

  /// True if ask `msg` waits for its answer.
  [[nodiscard]] bool ask_waiting(uint64_t msg) const {
    return asks_.count(msg) != 0;
  }

  // -- keys -----------------------------------------------------------------

  /// The handler instance of `k`'s live lane, as `H` (a `std::logic_error`
  /// if `k` has none or it is not an `H`).
  template <class H>
  [[nodiscard]] H& handler_of(const key& k) {
    auto* l = find_lane(k);
    auto* h = l && l->h ? dynamic_cast<H*>(l->h.get()) : nullptr;
    if (!h)
      throw std::logic_error("keylane::testing::kit: no live handler of that "
                             "type for key " + k.to_string());
    return *h;
  }

  /// True while `k` has a lane with a handler instance.
  [[nodiscard]] bool active(const key& k) const {
    auto* l = find_lane(k);
    return l && l->h;
  }

  /// True while `k`'s handler holds its lane (`hold`, until `release`).
  [[nodiscard]] bool held(const key& k) const {
    auto* l = find_lane(k);
    return l && l->held;
  }

  /// The turn budget `k`'s handler set (`set_turn_budget`), if it did.
  [[nodiscard]] std::optional<size_t> turn_budget(const key& k) const {
    auto* l = find_lane(k);
    return l ? l->budget : std::nullopt;
  }

  /// True when `k` is parked: its failed event and every later one wait.
  [[nodiscard]] bool parked(const key& k) const {
    return parked_.count(k.to_string()) != 0;
  }

  /// The parked events of `k`, in their order.
  [[nodiscard]] std::vector<uint64_t> parked_events(const key& k) const {
    auto i = parked_.find(k.to_string());
    return i == parked_.end() ? std::vector<uint64_t>{} : i->second;
  }

  /// Retires `k`'s lane now, as its linger would: `on_retire`, the state
  /// written, the instance dropped, its `run_later` timers with it. False
  /// (and nothing done) if the lane is not dry or is held.
  bool retire(const key& k) {
    auto* l = find_lane(k);
    if (!l || !dry(*l) || l->held)
      return false;
    core_.within([this, l] { retire_lane(*l); });
    run_until_idle();
    return true;
  }

  /// Writes every live key's state to the kit's store (a checkpoint).
  void checkpoint() {
    core_.within([this] {
      for (auto& [k, l] : lanes_)
        write_state(*l);
    });
  }

  /// The checkpoints written of `k`'s state, oldest first.
  [[nodiscard]] const std::vector<keylane::detail::state_record>&
  checkpoints(const key& k) {
    return store_[k.to_string()];
  }

  /// Ends "the process" without retiring anything: every lane and its
  /// handler go without `on_retire`, every timer and unanswered ask is
  /// dropped, queued and running events are lost (they stay pending), and
  /// the last checkpoint of each key in `lose` is lost too. Keys start
  /// again from the store on their next event.
  void crash(const std::vector<key>& lose = {}) {
    lanes_.clear();
    order_.clear();
    asks_.clear();
    staged_timers_.clear();
    core_.clear_timers();
    checkpoint_timer_ = 0;
    for (auto& k : lose) {
      auto& v = store_[k.to_string()];
      if (!v.empty())
        v.pop_back();
    }
    // As a restarted runtime does: each key's kept messages leave again,
    // and a target whose state holds one already drops it.
    if constexpr (codec<Payload>::available)
      resend_kept();
  }

private:
  void resend_kept() {
    for (auto& [name, v] : store_) {
      if (v.empty())
        continue;
      for (auto& m : v.back().outbox) {
        if (m.due_ms != 0)
          continue;
        auto payload = codec<Payload>::decode(m.payload);
        if (!payload)
          continue;
        auto from = sender_of_.at(name);
        send_kept(from, std::make_unique<kept_event>(
                          m.to, std::move(*payload),
                          keylane::detail::message_origin{from, m.number,
                                                          false}));
      }
    }
  }

public:
  /// The actor system handlers run in (CAF's deterministic scheduler):
  /// spawn the actors they talk to here.
  [[nodiscard]] caf::actor_system& system() noexcept { return core_.system(); }

  /// The settings in force.
  [[nodiscard]] const settings& config() const noexcept { return cfg_; }

private:
  // A staged message of a running attempt: sent when it ends well.
  struct staged {
    keylane::detail::event_ptr ev;
    bool timer = false;
    caf::timespan delay{};
    uint64_t id = 0; // a timer's id
  };

  // One key's lane: what it queues and runs, and the verbs its handler
  // calls (detail/kit_lane.hpp).
  struct lane;

  // A message kept in its sender's state (`messaging.exactly_once`).
  struct kept_event final : event_type {
    kept_event(keylane::key k, Payload p, keylane::detail::message_origin o)
      : event_type(std::move(k), std::move(p)), from(std::move(o)) {}
    const keylane::detail::message_origin* origin() const noexcept override {
      return &from;
    }
    keylane::detail::message_origin from;
  };

  struct waiting_ask {
    uint64_t asker = 0;  // lane id
    uint64_t target = 0; // event id, 0 for a stub
    uint64_t timer = 0;
    std::unique_ptr<keylane::detail::ask_waiter> waiter;
  };

  static handler_factory find(const handler_registry& reg,
                              const std::string& name);
  event_type& ev(uint64_t id) const;
  lane* find_lane(const key& k) const;
  lane* lane_by_id(uint64_t id) const;
  lane& lane_for(const key& k);
  uint64_t enqueue(keylane::detail::event_ptr e);
  bool dry(const lane& l) const;
  // Starts the lane's next event if it can; true if it did.
  bool start_next(lane& l);
  bool activate(lane& l, std::string& why);
  void attempt(lane& l);
  void on_complete(uint64_t lane_id, uint64_t token, outcome status,
                   bool permanent, std::string error,
                   keylane::detail::result_box_ptr box);
  void settle(lane& l, outcome status, std::string error, bool permanent);
  void park_one(uint64_t id, std::string why);
  void finish(lane& l, outcome status, std::string error);
  // -- messages -------------------------------------------------------------
  bool stubbed(const key& k) const;
  void record(const key& from, const keylane::detail::event_base& e,
              uint64_t id, message_kind kind, caf::timespan timeout,
              caf::timespan delay);
  // A tell leaves: recorded, and delivered unless its key is a stub.
  void leave(const key& from, keylane::detail::event_ptr e, message_kind kind,
             caf::timespan timeout, caf::timespan delay);
  void arm(const key& from, keylane::detail::event_ptr e, caf::timespan delay,
           uint64_t id);
  void unstage(uint64_t id);
  bool cancel_message_timer(uint64_t id);
  void send_ask(lane& l, keylane::detail::event_ptr e, caf::timespan timeout,
                std::unique_ptr<keylane::detail::ask_waiter> waiter);
  // Event `id` ended: answers the ask that sent it, if one waits.
  void end_ask(uint64_t id);
  bool answer_ask(uint64_t msg, errc code, std::string text,
                  keylane::detail::result_box_ptr box);
  // -- keyed state ----------------------------------------------------------
  bool stores() const noexcept;
  // As the runtime: messages are kept in the state only with a store,
  // `messaging.exactly_once`, and a codec for the payload.
  bool keeps_messages(const lane& l) const;
  // Whether `e` changed the state before (a sender or a source delivered
  // it again after a crash): then it ends skipped, unseen by the handler.
  bool applied_before(lane& l, keylane::detail::state_slot& s, event_type& e);
  void note_applied(lane& l, keylane::detail::state_slot& s, outcome status,
                    event_type& e);
  // A tell of an event that ended well, kept in the sender's state: it
  // leaves after the write that holds it.
  void keep(lane& l, keylane::detail::state_slot& s,
            keylane::detail::event_ptr m);
  void send_kept(const key& from, std::unique_ptr<event_type> e);
  // The runtime's write policy, on the test's clock: every
  // `state.checkpoint_ms` for every key with changes, after every event
  // with `sync = "every_event"`, and every `checkpoint_events` events.
  void state_written_after_event(lane& l);
  void write_state(lane& l);
  // Writes `l`'s state if it changed; returns the kept messages that may
  // leave now.
  std::vector<std::unique_ptr<event_type>> take_write(lane& l);
  void retire_lane(lane& l);
  // A dry, unheld lane retires `lane_linger_ms` after it ran dry.
  void note_dry(lane& l);

  settings cfg_;
  handler_factory make_;
  std::map<std::string, std::unique_ptr<lane>> lanes_;
  std::vector<std::string> order_; // lanes in the order they started
  std::map<uint64_t, keylane::detail::event_ptr> events_;
  std::vector<uint64_t> ended_;
  std::map<std::string, std::vector<uint64_t>> parked_;
  std::map<std::string, std::vector<keylane::detail::state_record>> store_;
  std::vector<key> stubs_;
  std::vector<sent_message<Payload>> sent_;
  std::map<uint64_t, waiting_ask> asks_;
  std::map<uint64_t, uint64_t> armed_; // timer message -> kit timer
  std::vector<uint64_t> staged_timers_;
  std::map<std::string, std::set<uint64_t>> confirmed_; // sender -> numbers
  std::map<std::string, key> sender_of_; // a store key's name -> its key
  uint64_t checkpoint_timer_ = 0;
  keylane::detail::jitter_rng rng_{0x6b69745f726e67ull};
  uint64_t next_event_ = 0;
  uint64_t next_lane_ = 0;
  uint64_t next_msg_ = 0;
  // Last: it goes first, with the actors that still hold a pointer to it.
  detail::kit_core core_;
};

} // namespace keylane::testing

#include "keylane/testing/detail/kit_lane.hpp"
#include "keylane/testing/detail/kit_attempts.hpp"
#include "keylane/testing/detail/kit_messages.hpp"
#include "keylane/testing/detail/kit_state.hpp"
