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
      // By index and by copy: a handler's tell may start a lane meanwhile.
      for (size_t n = 0; n < order_.size(); ++n) {
        auto i = lanes_.find(std::string{order_[n]});
        if (i != lanes_.end() && start_next(*i->second))
          moved = true;
      }
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
    auto found = answer_ask(msg, errc::none, {},
                            std::make_shared<keylane::detail::typed_result_box<
                              Result>>(std::move(value)));
    run_until_idle();
    return found;
  }

  /// Fails ask `msg` (to a stubbed key): the asker gets
  /// `errc::ask_failed`, as when the target event fails or parks.
  bool fail_ask(uint64_t msg, std::string reason = "failed by the test") {
    auto found = answer_ask(msg, errc::ask_failed, std::move(reason), nullptr);
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
    retire_lane(*l);
    return true;
  }

  /// Writes every live key's state to the kit's store (a checkpoint).
  void checkpoint() {
    for (auto& [k, l] : lanes_)
      write_state(*l);
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
  // calls (`handler_host`).
  struct lane final : keylane::detail::handler_host {
    kit* owner = nullptr;
    keylane::key k;
    uint64_t id = 0;
    std::unique_ptr<handler_base> h;
    std::deque<uint64_t> queue;
    uint64_t current = 0;
    uint64_t token = 0;
    uint64_t timeout_timer = 0;
    bool awaiting = false;
    bool backing_off = false;
    bool held = false;
    std::optional<size_t> budget;
    duration dry_since{-1};
    uint64_t linger_timer = 0;
    std::vector<staged> outbox;
    std::vector<uint64_t> timers; // its run_later timers
    // Keyed state: the running event's source position, whether it was
    // applied before (a redelivery), changes not yet written, and kept
    // messages that leave with the next write.
    bool has_origin = false;
    std::string stream;
    int64_t position = 0;
    bool dirty = false;
    size_t since_write = 0;
    std::vector<std::unique_ptr<event_type>> unsent;

    bool in_attempt() const noexcept { return current != 0 && !backing_off; }

    std::chrono::steady_clock::time_point now() override {
      return owner->clock_now();
    }
    void run_later(caf::timespan delay,
                   keylane::detail::unique_function fn) override {
      auto me = id;
      auto* o = owner;
      auto shared = std::make_shared<keylane::detail::unique_function>(
        std::move(fn));
      timers.push_back(o->core_.set_timer(delay, [o, me, shared] {
        if (auto* l = o->lane_by_id(me); l && l->h)
          (*shared)();
      }));
    }
    bool cancel_timer(uint64_t timer) override {
      return owner->cancel_message_timer(timer);
    }
    void hold(bool on) override {
      held = on;
      if (!on)
        dry_since = duration{-1};
    }
    void set_turn_budget(size_t events) override {
      budget = std::min<size_t>(std::max<size_t>(events, 1), 1000000);
    }
    errc tell(keylane::detail::event_ptr ev) override {
      if (in_attempt())
        outbox.push_back(staged{std::move(ev)});
      else
        owner->leave(k, std::move(ev), message_kind::tell, {}, {});
      return errc::none;
    }
    errc tell_after(caf::timespan delay, keylane::detail::event_ptr ev,
                    uint64_t& timer) override {
      timer = ++owner->next_msg_;
      if (in_attempt()) {
        outbox.push_back(staged{std::move(ev), true, delay, timer});
        owner->staged_timers_.push_back(timer);
      } else {
        owner->arm(k, std::move(ev), delay, timer);
      }
      return errc::none;
    }
    errc ask(keylane::detail::event_ptr ev, keylane::detail::ask_route&,
             caf::timespan timeout,
             std::unique_ptr<keylane::detail::ask_waiter> waiter) override {
      owner->send_ask(*this, std::move(ev), timeout, std::move(waiter));
      return errc::none;
    }
  };

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
    uint64_t asker = 0; // lane id
    uint64_t target = 0; // event id, 0 for a stub
    uint64_t timer = 0;
    std::unique_ptr<keylane::detail::ask_waiter> waiter;
  };

  static handler_factory find(const handler_registry& reg,
                              const std::string& name) {
    auto f = reg.find<Payload, Result>(name);
    if (!f)
      throw std::invalid_argument("keylane::testing::kit: no handler '" + name
                                  + "' of these types in the registry");
    return std::move(*f);
  }

  event_type& ev(uint64_t id) const {
    auto i = events_.find(id);
    if (i == events_.end())
      throw std::out_of_range("keylane::testing::kit: no event "
                              + std::to_string(id));
    return static_cast<event_type&>(*i->second);
  }

  lane* find_lane(const key& k) const {
    auto i = lanes_.find(k.to_string());
    return i == lanes_.end() ? nullptr : i->second.get();
  }

  lane* lane_by_id(uint64_t id) const {
    for (auto& [k, l] : lanes_)
      if (l->id == id)
        return l.get();
    return nullptr;
  }

  lane& lane_for(const key& k) {
    auto name = k.to_string();
    auto& l = lanes_[name];
    if (!l) {
      l = std::make_unique<lane>();
      l->owner = this;
      l->k = k;
      // Never a runtime lane's id: a completion's check "is my lane in
      // its call on this thread" is false for it, so every completion
      // reaches the kit's actor as a message (see kit_core).
      l->id = (uint64_t{1} << 63) | ++next_lane_;
      order_.push_back(name);
    }
    return *l;
  }

  uint64_t enqueue(keylane::detail::event_ptr e) {
    auto id = ++next_event_;
    e->seq = id;
    auto k = e->k;
    events_.emplace(id, std::move(e));
    auto name = k.to_string();
    if (auto p = parked_.find(name); p != parked_.end()) {
      park_one(id, "an earlier event of its key is parked");
      p->second.push_back(id);
      return id;
    }
    lane_for(k).queue.push_back(id);
    return id;
  }

  bool dry(const lane& l) const {
    return l.current == 0 && l.queue.empty() && !l.awaiting;
  }

  // Starts the lane's next event if it can; true if it did.
  bool start_next(lane& l) {
    if (!dry(l) && l.current == 0 && !l.queue.empty()) {
      l.current = l.queue.front();
      l.queue.pop_front();
      l.dry_since = duration{-1};
      attempt(l);
      return true;
    }
    return false;
  }

  bool activate(lane& l, std::string& why) {
    try {
      l.h = make_(cfg_.params);
      if (!l.h) {
        why = "the handler factory returned no handler";
        return false;
      }
      keylane::detail::handler_host::bind(*l.h, &l, core_.self(), &l.k);
      if (auto* s = l.h->keyed_state()) {
        auto& v = store_[l.k.to_string()];
        const keylane::detail::state_record* rec = v.empty() || !stores()
                                                     ? nullptr
                                                     : &v.back();
        if (auto err = s->load(rec)) {
          why = "its state could not be loaded";
          l.h.reset();
          return false;
        }
        s->meta = rec ? *rec : keylane::detail::state_record{};
        s->meta.state.clear();
      }
      l.h->on_activate(l.k);
      return true;
    } catch (const std::exception& e) {
      why = std::string{"activation threw: "} + e.what();
    } catch (...) {
      why = "activation threw";
    }
    l.h.reset();
    return false;
  }

  void attempt(lane& l) {
    auto& e = ev(l.current);
    ++e.attempts;
    l.awaiting = true;
    l.backing_off = false;
    auto token = ++l.token;
    if (!l.h) {
      std::string why;
      if (!activate(l, why)) {
        settle(l, outcome::failed, std::move(why), false);
        return;
      }
    }
    if (auto* s = l.h->keyed_state()) {
      if (applied_before(l, *s, e)) {
        ++l.token;
        finish(l, outcome::skipped, {});
        return;
      }
      if (cfg_.state_rollback)
        (void) s->keep();
    }
    std::chrono::steady_clock::time_point deadline{};
    if (cfg_.attempt_timeout_ms > 0) {
      auto limit = std::chrono::milliseconds(cfg_.attempt_timeout_ms);
      deadline = clock_now() + limit; // on the test's clock
      auto me = l.id;
      l.timeout_timer = core_.set_timer(limit, [this, me, token] {
        auto* x = lane_by_id(me);
        if (!x || !x->awaiting || x->backing_off || x->token != token)
          return;
        ++x->token; // its completion, should it come, is stale
        settle(*x, outcome::failed,
               "attempt timed out after "
                 + std::to_string(cfg_.attempt_timeout_ms) + " ms",
               false);
      });
    }
    keylane::detail::completion_core core{
      reinterpret_cast<keylane::detail::lane*>(&l), l.id, core_.host(),
      token, l.h->result_slot(e), deadline};
    try {
      l.h->invoke(e, std::move(core));
    } catch (const std::exception& x) {
      if (l.token == token && l.awaiting && !l.backing_off) {
        ++l.token;
        settle(l, outcome::failed, std::string{"handler threw: "} + x.what(),
               false);
      }
    }
  }

  void on_complete(uint64_t lane_id, uint64_t token, outcome status,
                   bool permanent, std::string error,
                   keylane::detail::result_box_ptr box) {
    auto* l = lane_by_id(lane_id);
    if (!l || !l->awaiting || l->backing_off || l->token != token
        || l->current == 0)
      return; // late, duplicate, or of an earlier attempt
    if (box)
      box->apply(l->h->result_slot(ev(l->current)));
    settle(*l, status, std::move(error), permanent);
  }

  void settle(lane& l, outcome status, std::string error, bool permanent) {
    if (l.timeout_timer)
      core_.cancel_timer(std::exchange(l.timeout_timer, 0));
    auto* s = l.h ? l.h->keyed_state() : nullptr;
    if (status != outcome::failed) {
      if (s)
        note_applied(l, *s, status, ev(l.current));
      auto out = std::move(l.outbox);
      l.outbox.clear();
      finish(l, status, {});
      for (auto& m : out) {
        if (m.timer) {
          unstage(m.id);
          arm(l.k, std::move(m.ev), m.delay, m.id);
        } else if (keeps_messages(l)) {
          keep(l, *s, std::move(m.ev));
        } else {
          leave(l.k, std::move(m.ev), message_kind::tell, {}, {});
        }
      }
      if (s)
        state_written_after_event(l);
      return;
    }
    for (auto& m : l.outbox)
      if (m.timer)
        unstage(m.id);
    l.outbox.clear();
    if (s && cfg_.state_rollback)
      s->restore();
    auto& e = ev(l.current);
    if (permanent || e.attempts >= cfg_.max_attempts) {
      if (cfg_.park == park_mode::none) {
        finish(l, outcome::failed, std::move(error));
        return;
      }
      auto name = l.k.to_string();
      e.error = std::move(error);
      auto& list = parked_[name];
      auto id = std::exchange(l.current, 0);
      l.awaiting = false;
      ++l.token;
      e.status = outcome::parked;
      ended_.push_back(id);
      list.push_back(id);
      end_ask(id);
      while (!l.queue.empty()) {
        auto next = l.queue.front();
        l.queue.pop_front();
        park_one(next, "an earlier event of its key is parked");
        list.push_back(next);
      }
      return;
    }
    // Retry at the head after a backoff; the key's later events wait.
    e.error = std::move(error);
    l.backing_off = true;
    auto token = ++l.token;
    auto delay = keylane::detail::backoff_delay(cfg_, e.attempts, rng_());
    auto me = l.id;
    core_.set_timer(delay, [this, me, token] {
      auto* x = lane_by_id(me);
      if (!x || !x->backing_off || x->token != token)
        return;
      attempt(*x);
    });
  }

  void park_one(uint64_t id, std::string why) {
    auto& e = ev(id);
    e.status = outcome::parked;
    e.error = std::move(why);
    ended_.push_back(id);
    end_ask(id);
  }

  void finish(lane& l, outcome status, std::string error) {
    auto id = std::exchange(l.current, 0);
    l.awaiting = false;
    l.backing_off = false;
    auto& e = ev(id);
    e.status = status;
    if (status == outcome::failed)
      e.error = std::move(error);
    else
      e.error.clear();
    ended_.push_back(id);
    end_ask(id);
  }

  // -- messages -------------------------------------------------------------

  bool stubbed(const key& k) const {
    for (auto& s : stubs_)
      if (s == k)
        return true;
    return false;
  }

  void record(const key& from, const keylane::detail::event_base& e,
              uint64_t id, message_kind kind, caf::timespan timeout,
              caf::timespan delay) {
    auto& te = static_cast<const event_type&>(e);
    sent_.push_back(sent_message<Payload>{id, from, te.k, te.payload, kind,
                                          timeout, delay});
  }

  // A tell leaves: recorded, and delivered unless its key is a stub.
  void leave(const key& from, keylane::detail::event_ptr e,
             message_kind kind, caf::timespan timeout, caf::timespan delay) {
    record(from, *e, ++next_msg_, kind, timeout, delay);
    if (!stubbed(e->k))
      enqueue(std::move(e));
  }

  void arm(const key& from, keylane::detail::event_ptr e,
           caf::timespan delay, uint64_t id) {
    record(from, *e, id, message_kind::timer, {}, delay);
    auto shared = std::make_shared<keylane::detail::event_ptr>(std::move(e));
    armed_[id] = core_.set_timer(delay, [this, id, shared] {
      armed_.erase(id);
      if (!stubbed((*shared)->k))
        enqueue(std::move(*shared));
    });
  }

  void unstage(uint64_t id) {
    for (auto i = staged_timers_.begin(); i != staged_timers_.end(); ++i)
      if (*i == id) {
        staged_timers_.erase(i);
        return;
      }
  }

  bool cancel_message_timer(uint64_t id) {
    if (auto i = armed_.find(id); i != armed_.end()) {
      core_.cancel_timer(i->second);
      armed_.erase(i);
      return true;
    }
    for (auto& [k, l] : lanes_)
      for (auto m = l->outbox.begin(); m != l->outbox.end(); ++m)
        if (m->timer && m->id == id) {
          l->outbox.erase(m);
          unstage(id);
          return true;
        }
    return false;
  }

  void send_ask(lane& l, keylane::detail::event_ptr e, caf::timespan timeout,
                std::unique_ptr<keylane::detail::ask_waiter> waiter) {
    auto msg = ++next_msg_;
    record(l.k, *e, msg, message_kind::ask, timeout, {});
    waiting_ask w;
    w.asker = l.id;
    w.waiter = std::move(waiter);
    w.timer = core_.set_timer(timeout, [this, msg, timeout] {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
      answer_ask(msg, errc::ask_timeout,
                 "ask timed out after " + std::to_string(ms.count()) + " ms",
                 nullptr);
    });
    if (!stubbed(e->k))
      w.target = enqueue(std::move(e));
    asks_.emplace(msg, std::move(w));
  }

  // Event `id` ended: answers the ask that sent it, if one waits.
  void end_ask(uint64_t id) {
    uint64_t msg = 0;
    for (auto& [m, w] : asks_)
      if (w.target == id) {
        msg = m;
        break;
      }
    if (msg != 0) {
      auto& e = ev(id);
      if (e.status == outcome::ok && e.result)
        answer_ask(msg, errc::none, {},
                   std::make_shared<keylane::detail::typed_result_box<Result>>(
                     *e.result));
      else
        answer_ask(msg, errc::ask_failed,
                   "the asked event ended " + std::string{to_string(e.status)},
                   nullptr);
    }
  }

  bool answer_ask(uint64_t msg, errc code, std::string text,
                  keylane::detail::result_box_ptr box) {
    auto i = asks_.find(msg);
    if (i == asks_.end())
      return false;
    auto w = std::move(i->second);
    asks_.erase(i);
    if (w.timer)
      core_.cancel_timer(w.timer);
    auto* l = lane_by_id(w.asker);
    if (!l || !l->h)
      return true; // its lane is gone: the answer finds no one
    w.waiter->answer(code, std::move(text), box.get());
    return true;
  }

  // -- lifetime -------------------------------------------------------------

  // -- keyed state ----------------------------------------------------------

  bool stores() const noexcept {
    return cfg_.state_store != state_backend::none;
  }

  // As the runtime: messages are kept in the state only with a store,
  // `messaging.exactly_once`, and a codec for the payload.
  bool keeps_messages(const lane& l) const {
    if constexpr (codec<Payload>::available)
      return stores() && cfg_.messaging_exactly_once && l.h
             && l.h->keyed_state() != nullptr;
    else
      return false;
  }

  // Whether `e` changed the state before (a sender or a source delivered
  // it again after a crash): then it ends skipped, unseen by the handler.
  bool applied_before(lane& l, keylane::detail::state_slot& s,
                      event_type& e) {
    if (const auto* o = e.origin(); o && o->number <= s.meta.received(o->sender)) {
      s.delivered.emplace_back(o->sender, o->number);
      return true;
    }
    l.has_origin = s.origin(e, l.stream, l.position);
    return l.has_origin && l.position <= s.meta.position(l.stream);
  }

  void note_applied(lane& l, keylane::detail::state_slot& s, outcome status,
                    event_type& e) {
    if (status == outcome::ok)
      ++s.meta.events;
    if (l.has_origin)
      s.meta.advance(l.stream, l.position);
    if (const auto* o = e.origin()) {
      s.meta.receive(o->sender, o->number);
      s.delivered.emplace_back(o->sender, o->number);
    }
    l.has_origin = false;
    l.dirty = true;
  }

  // A tell of an event that ended well, kept in the sender's state: it
  // leaves after the write that holds it.
  void keep(lane& l, keylane::detail::state_slot& s,
            keylane::detail::event_ptr m) {
    if constexpr (!codec<Payload>::available) {
      (void) s;
      leave(l.k, std::move(m), message_kind::tell, {}, {});
    } else {
      auto& te = static_cast<event_type&>(*m);
      auto bytes = codec<Payload>::encode(te.payload);
      if (!bytes)
        return leave(l.k, std::move(m), message_kind::tell, {}, {});
      keylane::detail::kept_message km;
      km.to = te.k;
      km.number = ++s.meta.sent;
      km.payload = std::move(*bytes);
      s.meta.outbox.push_back(km);
      sender_of_.emplace(l.k.to_string(), l.k);
      l.unsent.push_back(std::make_unique<kept_event>(
        te.k, std::move(te.payload),
        keylane::detail::message_origin{l.k, km.number, false}));
    }
  }

  void send_kept(const key& from, std::unique_ptr<event_type> e) {
    record(from, *e, ++next_msg_, message_kind::tell, {}, {});
    if (!stubbed(e->k))
      enqueue(keylane::detail::event_ptr{e.release()});
  }

  // The runtime's write policy, on the test's clock: every
  // `state.checkpoint_ms` for every key with changes, after every event
  // with `sync = "every_event"`, and every `checkpoint_events` events.
  void state_written_after_event(lane& l) {
    if (!stores())
      return;
    ++l.since_write;
    if (cfg_.state_sync_mode == state_sync::every_event
        || (cfg_.state_checkpoint_events != 0
            && l.since_write >= cfg_.state_checkpoint_events)) {
      write_state(l);
      return;
    }
    if (checkpoint_timer_ == 0 && cfg_.state_checkpoint_ms != 0)
      checkpoint_timer_ = core_.set_timer(
        std::chrono::milliseconds(cfg_.state_checkpoint_ms), [this] {
          checkpoint_timer_ = 0;
          for (auto& [k, x] : lanes_)
            if (x->current == 0)
              write_state(*x);
        });
  }

  void write_state(lane& l) {
    auto sends = take_write(l);
    for (auto& m : sends)
      send_kept(l.k, std::move(m));
  }

  // Writes `l`'s state if it changed; returns the kept messages that may
  // leave now.
  std::vector<std::unique_ptr<event_type>> take_write(lane& l) {
    auto* s = l.h ? l.h->keyed_state() : nullptr;
    if (!s || !stores() || !l.dirty)
      return {};
    auto bytes = s->encode();
    if (!bytes)
      return {};
    // Messages whose targets' writes hold them are forgotten here, as the
    // runtime's sender forgets them at its next write.
    auto& done = confirmed_[l.k.to_string()];
    auto& out = s->meta.outbox;
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const keylane::detail::kept_message& m) {
                               return done.count(m.number) != 0;
                             }),
              out.end());
    auto rec = s->meta;
    rec.state = std::move(*bytes);
    store_[l.k.to_string()].push_back(std::move(rec));
    for (auto& [sender, number] : s->delivered)
      confirmed_[sender.to_string()].insert(number);
    s->delivered.clear();
    l.dirty = false;
    l.since_write = 0;
    auto sends = std::move(l.unsent);
    l.unsent.clear();
    return sends;
  }

  void retire_lane(lane& l) {
    std::vector<std::unique_ptr<event_type>> sends;
    if (l.h) {
      try {
        l.h->on_retire(l.k);
      } catch (...) {
        // As in the runtime: a throwing on_retire still retires the lane.
      }
      sends = take_write(l);
    }
    for (auto t : l.timers)
      core_.cancel_timer(t);
    auto k = l.k;
    auto name = k.to_string();
    lanes_.erase(name);
    for (auto i = order_.begin(); i != order_.end(); ++i)
      if (*i == name) {
        order_.erase(i);
        break;
      }
    // After the lane is gone: a message to its own key starts a new one.
    for (auto& m : sends)
      send_kept(k, std::move(m));
  }

  // A dry, unheld lane retires `lane_linger_ms` after it ran dry.
  void note_dry(lane& l) {
    if (!dry(l) || l.held || !l.h || l.dry_since >= duration::zero())
      return;
    l.dry_since = core_.now();
    auto me = l.id;
    auto since = l.dry_since;
    l.linger_timer = core_.set_timer(
      std::chrono::milliseconds(cfg_.lane_linger_ms), [this, me, since] {
        auto* x = lane_by_id(me);
        if (x && dry(*x) && !x->held && x->dry_since == since)
          retire_lane(*x);
      });
  }

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
