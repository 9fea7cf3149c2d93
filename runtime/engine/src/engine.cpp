// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/engine.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include <caf/all.hpp>

#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/key_table.hpp"
#include "keylane/detail/metrics_component.hpp"
#include "keylane/detail/runtime_parts.hpp"
#include "keylane/reload.hpp"
#include "keylane/usable_cpus.hpp"
#include "kept_messages.hpp"

namespace keylane::detail {

namespace {

// The runtime whose thread this is: its consumer thread, or a worker of its
// actor system (shards, supervisor, sink and the user's actors there).
// Credit and backlog slots come back only through those threads, so a
// submit there must never wait for them.
thread_local const engine* own_thread_of = nullptr;

class thread_marker final : public caf::thread_hook {
public:
  explicit thread_marker(const engine* eng) noexcept : eng_(eng) {}
  void init(caf::actor_system&) override {
    // nop
  }
  void thread_started() override { own_thread_of = eng_; }
  void thread_terminates() override { own_thread_of = nullptr; }

private:
  const engine* eng_;
};

size_t worker_threads(const settings& c) {
  return c.threads != 0 ? c.threads : usable_cpus();
}

size_t shards_for(const settings& c) {
  return c.shards != 0 ? c.shards : worker_threads(c);
}

} // namespace

bool engine::on_own_thread() const noexcept {
  return own_thread_of == this;
}

engine::engine(settings cfg, output_fn out, payload_ops ops)
  : cfg_(std::move(cfg)),
    ops_(std::move(ops)),
    may_wait_(cfg_.overflow == overflow_policy::block),
    log_(cfg_.log),
    live_(cfg_),
    ledger_(waiter_, cfg_.park == park_mode::sqlite),
    inboxes_(std::make_unique<inboxes>(shards_for(cfg_))),
    keys_(std::make_unique<key_table>(cfg_.key_backlog, cfg_.max_active_keys,
                                      *inboxes_)),
    ingress_(initial_window(cfg_), *keys_, *inboxes_, waiter_),
    messaging_(ingress_, cfg_.messaging_max_in_flight,
               cfg_.messaging_max_timers),
    // Global order with `output_thread = "consumer"`: the sink calls the
    // callback itself, on its own thread (spawn_actors): one hand-off fewer
    // than a consumer thread behind it. With "auto" the emitting worker
    // calls it while the consumer thread sleeps.
    output_(std::move(out),
            cfg_.output_thread == output_thread::sink
              || (cfg_.order == order_mode::global
                  && cfg_.output_thread == output_thread::consumer),
            cfg_.output_thread == output_thread::automatic,
            ingress_, waiter_, log_, pub_, live_) {
  inboxes_->set_inline(ops_.inline_fill, ops_.inline_event);
  // One block per shard and the supervisor's, before any actor runs.
  for (size_t i = 0; i <= inboxes_->shard_count(); ++i)
    pub_.tallies.push_back(std::make_unique<outcome_tally>());
}

caf::expected<std::unique_ptr<engine>>
engine::start(settings cfg, handler_factory make, output_fn out,
              payload_ops ops) {
  if (!make)
    return make_error(errc::unknown_handler, "no handler factory given");
  if (auto err = check_numbers(cfg))
    return err;
  // Build one handler up front: a handler that cannot be built, or that
  // leaves keys of its table unread, stops the start here.
  try {
    auto probe = make(cfg.params);
    if (!probe)
      return make_error(errc::unknown_handler,
                        "the handler factory returned no handler");
  } catch (const std::exception& e) {
    return make_error(errc::invalid_config,
                      std::string{"handler construction threw: "} + e.what());
  }
  if (auto problems = cfg.params.problems(cfg.handler); !problems.empty()) {
    std::string msg;
    for (auto& p : problems)
      msg += (msg.empty() ? "" : "\n") + p;
    return make_error(errc::invalid_config, std::move(msg));
  }
  std::unique_ptr<engine> eng{
    new engine(std::move(cfg), std::move(out), std::move(ops))};
  // First, so that whatever follows reads against it.
  eng->log_.write(log_level::info, describe_non_defaults(eng->cfg_));
  // The park service keeps a reference to the engine's payload operations.
  auto parks = park_service::open(eng->cfg_, eng->ops_, eng->log_);
  if (!parks)
    return std::move(parks.error());
  eng->parks_ = std::move(*parks);
  auto state = state_service::open(eng->cfg_, eng->log_);
  if (!state)
    return std::move(state.error());
  eng->state_ = std::move(*state);
  if (auto err = eng->open_spill())
    return err;
  std::vector<key> parked;
  if (auto* st = eng->parks_->store()) {
    auto found = st->keys();
    if (!found) // the store's error names the store and what failed
      return std::move(found.error());
    for (auto& pk : *found)
      parked.push_back(std::move(pk.k));
  }
  auto& c = eng->cfg_;
  eng->system_cfg_ = std::make_unique<caf::actor_system_config>();
  auto& sc = *eng->system_cfg_;
  sc.set("scheduler.policy", c.scheduler == scheduler_policy::sharing
                               ? caf::atom("sharing")
                               : caf::atom("stealing"));
  sc.set("scheduler.max-threads", worker_threads(c));
  sc.set("scheduler.max-throughput", c.max_throughput);
  sc.set("logger.verbosity", caf::atom("quiet"));
  sc.add_thread_hook<thread_marker>(eng.get());
  try {
    eng->system_ = std::make_unique<caf::actor_system>(sc);
  } catch (const std::exception& e) {
    return make_error(errc::startup_failed, e.what());
  }
  auto* raw = eng.get();
  runtime_parts parts{raw->cfg_,    raw->ops_,  raw->ingress_,
                      *raw->keys_,  *raw->inboxes_,
                      raw->output_, *raw->parks_, *raw->state_, raw->live_,
                      raw->ledger_, raw->pub_,  raw->log_,
                      raw->messaging_, raw->spill_.get()};
  auto actors = spawn_actors(*raw->system_, parts, std::move(make),
                             raw->cfg_.params, std::move(parked));
  raw->supervisor_ = std::move(actors.supervisor);
  raw->sink_ = std::move(actors.sink);
  raw->inboxes_->attach_supervisor(raw->supervisor_);
  raw->messaging_.use_timer_actor(raw->supervisor_);
  auto window = c.window_auto ? std::max(c.window, c.window_max) : c.window;
  if (window != unbounded && c.messaging_max_in_flight < window)
    raw->log_.write(
      log_level::warning,
      "messaging.max_in_flight (" + std::to_string(c.messaging_max_in_flight)
        + ") is below the window (" + std::to_string(window)
        + "): when it fills, keys whose next event tells wait for units "
          "held by messages queued behind such events (docs/messaging.md, "
          "\"A full budget\")");
  if (raw->state_->enabled()) {
    raw->state_->on_messages(
      [raw](std::vector<event_ptr>& sends,
            const std::vector<std::pair<key, uint64_t>>& done) {
        raw->messaging_.delivered(done);
        raw->messaging_.send_kept(sends);
      });
    auto scan_began = std::chrono::steady_clock::now();
    auto resent = resend_kept_messages(
      *raw->state_->store(), raw->messaging_, raw->ops_, raw->log_,
      [raw](uint64_t id, caf::timespan delay) {
        raw->messaging_.arm_timer(id, delay);
      });
    if (!resent)
      return std::move(resent.error()); // ~engine stops what was started
    if (*resent != 0)
      raw->log_.write(log_level::info,
                      "messaging: " + std::to_string(*resent)
                        + " kept messages sent again and timers armed again "
                          "(their targets drop those they applied before); "
                          "reading the state store for them took "
                        + std::to_string(
                          std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - scan_began)
                            .count())
                        + " ms");
  }
  raw->output_.start([raw] { own_thread_of = raw; });
  if (!c.metrics_listen.empty()) {
    if (!component_open_metrics_endpoint)
      return make_error(
        errc::invalid_config,
        "metrics.listen = \"" + c.metrics_listen
          + "\" needs keylane's metrics endpoint, which this program does "
            "not link: link keylane::metrics (find_package(keylane "
            "COMPONENTS metrics)), built when KEYLANE_BUILD_METRICS is on");
    auto ep = component_open_metrics_endpoint(
      c.metrics_listen, c.metrics_threads,
      {[raw] { return raw->snapshot(); }, [raw] { return raw->parked_keys(); }});
    if (!ep)
      return std::move(ep.error()); // ~engine stops what was started
    eng->metrics_ = std::move(*ep);
  }
  return eng;
}

engine::~engine() {
  stop();
}

bool engine::drain(std::chrono::nanoseconds timeout) {
  if (on_own_thread()) {
    log_.write(log_level::error,
               "drain() called on one of the runtime's own threads (the "
               "output callback, a handler, a run_later timer): refused, it "
               "would wait for that thread");
    return false;
  }
  auto settled = waiter_.wait_until(waiter::after(timeout), [&] {
    // Messages kept for a state write are not accepted yet: the drain
    // waits for them too (each ends in an output, which wakes this).
    return (output_.delivered() + output_.lost() == ingress_.accepted()
            && messaging_.in_flight() == 0)
           || stop_begun_.load(std::memory_order_acquire);
  });
  return settled && output_.delivered() == ingress_.accepted();
}

void engine::end_actors() {
  std::lock_guard<std::mutex> guard{actors_mtx_};
  if (supervisor_)
    caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  if (sink_)
    caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
}

// On a thread of the runtime, waiting for the actors (or joining the
// consumer thread) would wait for this thread: do what needs no waiting
// and leave the rest, and the report, to the owner's stop().
stop_report engine::begin_stop() {
  if (!stop_begun_.exchange(true, std::memory_order_seq_cst)) {
    log_.write(log_level::warning,
               "stop() called on one of the runtime's own threads (the "
               "output callback, a handler, a run_later timer): the stop has "
               "begun; the owner's stop() finishes it and reports what was "
               "not delivered");
    ingress_.close(); // wakes a waiting drain() too
    output_.end_pulls(); // and a waiting pull(), which would wait in vain
    end_actors();
  }
  stop_report r;
  r.accepted = ingress_.accepted();
  r.delivered = output_.delivered();
  r.complete = false;
  return r;
}

stop_report engine::stop() {
  if (on_own_thread())
    return begin_stop();
  if (stopped_.exchange(true, std::memory_order_seq_cst))
    return report_;
  stop_begun_.store(true, std::memory_order_seq_cst);
  // First: no scrape may read an engine whose actors are ending (closing
  // waits for a scrape in progress), from our endpoint or the host's.
  metrics_.reset();
  gate_->close();
  ingress_.close();
  output_.end_pulls();
  if (state_)
    state_->interrupt();
  if (parks_) // null when start failed opening it
    parks_->interrupt();
  end_actors();
  waiter_.wait_until(waiter::after(std::chrono::hours(24 * 365)),
                     [this] { return ledger_.actors_gone(); });
  {
    std::lock_guard<std::mutex> guard{actors_mtx_};
    supervisor_ = nullptr;
    sink_ = nullptr;
  }
  if (state_)
    state_->close(std::chrono::seconds(30));
  for (auto& ev : output_.finish())
    ledger_.abandon(std::move(ev), "completed");
  auto left = keys_->take_all_held();
  for (auto& ev : inboxes_->detach_all())
    left.push_back(std::move(ev));
  for (auto& ev : left)
    ledger_.abandon(std::move(ev), "queued");
  report_.accepted = ingress_.accepted();
  report_.delivered = output_.delivered();
  std::vector<event_ptr> to_keep;
  ledger_.take(report_.unfinished, to_keep);
  std::sort(report_.unfinished.begin(), report_.unfinished.end(),
            [](auto& x, auto& y) { return x.seq < y.seq; });
  keep_unfinished(std::move(to_keep));
  spill_.reset(); // the sink read back what it held there: remove the file
  return report_;
}

keylane::stats engine::snapshot() const {
  keylane::stats s;
  auto r = std::memory_order_relaxed;
  s.accepted = ingress_.accepted();
  s.delivered = output_.delivered();
  s.rejected = ingress_.rejected();
#define KEYLANE_LOAD_pub(name) s.name = pub_.name.load(r);
#define KEYLANE_LOAD_table(name)
#define KEYLANE_X(name, type, metric, help, src) KEYLANE_LOAD_##src(name)
  KEYLANE_PUBLISHED_COUNTERS(KEYLANE_X)
#undef KEYLANE_X
#undef KEYLANE_LOAD_table
#undef KEYLANE_LOAD_pub
  // The cap's own counts: every lane start and retire moves them.
  s.active_lanes = keys_->active();
  s.peak_active_lanes = keys_->peak_active();
  s.waiting_keys = keys_->waiting();
  s.ingress_depth = inboxes_->depth();
  s.window = ingress_.window();
  s.latency = pub_.latency.snapshot();
  for (const auto& t : pub_.tallies) {
    s.ok += t->ok.load(r);
    s.skipped += t->skipped.load(r);
    s.failed += t->failed.load(r);
    s.parked += t->parked.load(r);
    s.retries += t->retries.load(r);
    s.latency += t->latency.snapshot();
  }
  auto m = messaging_.counters();
  s.messages_sent = m.sent;
  s.messages_refused = m.refused;
  s.messages_in_flight = m.in_flight;
  s.asks = m.asks;
  s.ask_timeouts = m.ask_timeouts;
  s.timers_pending = m.timers_pending;
  s.timers_fired = m.timers_fired;
  s.timers_cancelled = m.timers_cancelled;
  if (parks_)
    s.park_write_failures = parks_->write_failures();
  if (state_) {
    auto c = state_->counters();
    s.state_loads = c.loads;
    s.state_load_failures = c.load_failures;
    s.state_load_latency = c.load_latency;
    s.state_writes = c.writes;
    s.state_write_bytes = c.write_bytes;
    s.state_checkpoints = c.checkpoints;
    s.state_write_failures = c.write_failures;
    s.state_pending = c.pending;
    s.state_checkpoint_age = c.checkpoint_age;
  }
  if (s.sink_buffered > 0) {
    auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                 clock::now().time_since_epoch())
                 .count();
    s.awaited_age = std::chrono::nanoseconds{
      std::max<int64_t>(0, now - pub_.awaited_since_ns.load(r))};
  }
  return s;
}

} // namespace keylane::detail
