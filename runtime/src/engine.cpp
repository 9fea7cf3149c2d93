#include "keylane/detail/engine.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include <caf/all.hpp>

#include "keylane/detail/metrics_endpoint.hpp"
#include "keylane/detail/sink.hpp"
#include "keylane/detail/supervisor.hpp"

namespace keylane::detail {

namespace {

constexpr auto forever = std::chrono::hours(24 * 365);

std::chrono::steady_clock::time_point deadline_after(std::chrono::nanoseconds d) {
  auto now = std::chrono::steady_clock::now();
  if (d >= std::chrono::nanoseconds{forever})
    return now + forever;
  return now + d;
}

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

} // namespace

bool engine::on_own_thread() const noexcept {
  return own_thread_of == this;
}

engine::engine(settings cfg, output_fn out, payload_ops ops)
  : cfg_(std::move(cfg)),
    out_(std::move(out)),
    ops_(std::move(ops)),
    backlog_(cfg_.key_backlog),
    output_token_(std::make_unique<producer_token>(output_)),
    log_(cfg_.log),
    live_(std::make_shared<const settings>(cfg_)),
    window_(initial_window(cfg_)),
    record_latency_(cfg_.metrics_latency) {
  for (auto& t : ingress_tokens_)
    t = std::make_unique<producer_token>(ingress_);
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
  if (auto err = eng->open_store())
    return err;
  if (auto err = eng->open_spill())
    return err;
  std::vector<key> parked;
  if (eng->store_) {
    auto found = eng->store_->keys();
    if (!found) // the store's error names the store and what failed
      return std::move(found.error());
    for (auto& pk : *found)
      parked.push_back(std::move(pk.k));
  }
  auto& c = eng->cfg_;
  eng->system_cfg_ = std::make_unique<caf::actor_system_config>();
  auto& sc = *eng->system_cfg_;
  auto threads = c.threads != 0 ? c.threads
                                : std::max(1u, std::thread::hardware_concurrency());
  sc.set("scheduler.policy", c.scheduler == scheduler_policy::sharing
                               ? caf::atom("sharing")
                               : caf::atom("stealing"));
  sc.set("scheduler.max-threads", threads);
  eng->shard_count_ = c.shards != 0 ? c.shards : threads;
  for (size_t i = 0; i < eng->shard_count_; ++i) {
    auto box = std::make_unique<shard_inbox>();
    for (auto& t : box->tokens)
      t = std::make_unique<producer_token>(box->events);
    eng->inboxes_.push_back(std::move(box));
  }
  sc.set("scheduler.max-throughput", c.max_throughput);
  sc.set("logger.verbosity", caf::atom("quiet"));
  sc.add_thread_hook<thread_marker>(eng.get());
  try {
    eng->system_ = std::make_unique<caf::actor_system>(sc);
  } catch (const std::exception& e) {
    return make_error(errc::startup_failed, e.what());
  }
  auto* raw = eng.get();
  eng->sink_ = eng->system_->spawn<sink>(raw);
  eng->supervisor_ = eng->system_->spawn<supervisor>(raw, eng->sink_,
                                                     std::move(make),
                                                     raw->cfg_.params,
                                                     std::move(parked));
  if (eng->out_)
    eng->consumer_ = std::thread{[raw] { raw->consume_loop(); }};
  if (!c.metrics_listen.empty()) {
    auto ep = metrics_endpoint::open(
      c.metrics_listen,
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

// -- producers ---------------------------------------------------------------

engine::admission engine::submit(const key& k, make_fn make, void* ctx) {
  inside_submit_.fetch_add(1, std::memory_order_seq_cst);
  auto leave = [this](errc e) {
    if (e != errc::none)
      rejected_.fetch_add(1, std::memory_order_relaxed);
    inside_submit_.fetch_sub(1, std::memory_order_release);
    return admission{e, 0};
  };
  if (stopped_.load(std::memory_order_seq_cst))
    return leave(errc::stopped);
  // On our own threads `block` would wait for credit only they can return.
  auto block = cfg_.overflow == overflow_policy::block && !on_own_thread();
  // Window credit. A compare-and-swap, never a speculative increment: a
  // transient overshoot would skew the count `credit` wakes waiters by.
  auto taken = [this] {
    auto window = window_.load(std::memory_order_relaxed);
    if (window == unbounded) {
      in_flight_.fetch_add(1, std::memory_order_seq_cst);
      return true;
    }
    auto cur = in_flight_.load(std::memory_order_seq_cst);
    while (cur < window)
      if (in_flight_.compare_exchange_weak(cur, cur + 1,
                                           std::memory_order_seq_cst))
        return true;
    return false;
  };
  if (!taken()) {
    if (!block)
      return leave(errc::window_full);
    bool got = false;
    wait_until(deadline_after(forever), [&] {
      got = taken();
      return got || stopped_.load(std::memory_order_acquire);
    });
    if (!got)
      return leave(errc::stopped);
  }
  event_ptr ev;
  std::exception_ptr failure;
  uint64_t seq = 0;
  auto stripe = backlog::shard_index(k);
  const void* direct = nullptr;
  uint32_t to_shard = 0;
  // No deadline: `admit` reads the clock only if it has to wait.
  bool admitted = backlog_.admit(k, block, backlog::no_deadline, stopped_,
                                 [&](backlog::slot& slot) {
    try {
      ev = make(ctx);
    } catch (...) {
      failure = std::current_exception();
      return;
    }
    seq = next_seq_.fetch_add(1, std::memory_order_acq_rel);
    ev->seq = seq;
    ev->submitted = clock::now();
    if (slot.to.lane != nullptr) {
      // A live lane holds everything of `k` that went to ingress: straight
      // to its shard, no supervisor round.
      direct = slot.to.lane;
      to_shard = slot.to.shard;
      ev->lane = slot.to.lane;
      slot.last_direct = seq + 1;
      auto& box = *inboxes_[to_shard];
      box.events.enqueue(*box.tokens[stripe], ev.release());
    } else {
      slot.last_ingress = seq + 1;
      ingress_.enqueue(*ingress_tokens_[stripe], ev.release());
    }
  });
  if (!admitted || failure) {
    if (failure)
      backlog_.release(k, 1);
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    if (failure) {
      leave(errc::none);
      std::rethrow_exception(failure);
    }
    return leave(stopped_.load() ? errc::stopped : errc::key_backlog_full);
  }
  if (direct != nullptr)
    wake_shard(to_shard);
  else
    wake_supervisor();
  leave(errc::none);
  return admission{errc::none, seq};
}

void engine::wake_shard(size_t i) {
  // As `wake_supervisor`, with `rearm_inbox` on the other side.
  auto& box = *inboxes_[i];
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (box.signalled.load(std::memory_order_relaxed))
    return;
  if (!box.signalled.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(box.actor, inbox_atom::value);
}

void engine::attach_shard(size_t i, caf::actor a) {
  inboxes_[i]->actor = std::move(a);
}

void engine::rearm_inbox(size_t i) noexcept {
  inboxes_[i]->signalled.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

size_t engine::dequeue_inbox(size_t i, event_base** buf, size_t max) {
  return inboxes_[i]->events.try_dequeue_bulk(buf, max);
}

void engine::wake_supervisor() {
  // Pairs with the fence in `rearm_ingress`: either the supervisor sees our
  // event in its drain, or we see the flag cleared and signal it again.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (signalled_.load(std::memory_order_relaxed))
    return;
  if (!signalled_.exchange(true, std::memory_order_acq_rel))
    caf::anon_send(supervisor_, drain_atom::value);
}

void engine::rearm_ingress() noexcept {
  signalled_.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

size_t engine::dequeue_ingress(event_base** buf, size_t max) {
  return ingress_.try_dequeue_bulk(buf, max);
}

// -- window credit and waiting -------------------------------------------------

bool engine::wait_until(std::chrono::steady_clock::time_point deadline,
                        const std::function<bool()>& done) {
  std::unique_lock<std::mutex> guard{wait_mtx_};
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  bool ok = true;
  while (!done()) {
    if (wait_cv_.wait_until(guard, deadline) == std::cv_status::timeout
        && std::chrono::steady_clock::now() >= deadline) {
      ok = done();
      break;
    }
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return ok;
}

void engine::credit(size_t n) {
  auto left = in_flight_.fetch_sub(n, std::memory_order_seq_cst) - n;
  delivered_.fetch_add(n, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) == 0)
    return;
  // Wake blocked producers only when there is room, and drain at zero.
  // (Credits arrive in batches from the consumer, so this is not a wake-up
  // per event.)
  if (left >= window_.load(std::memory_order_relaxed) && left != 0)
    return;
  { std::lock_guard<std::mutex> guard{wait_mtx_}; } // orders after the check
  wait_cv_.notify_all();
}

// -- output ------------------------------------------------------------------

void engine::emit(event_base** evs, size_t n) {
  output_.enqueue_bulk(*output_token_, evs, n);
}

void engine::consume_loop() {
  own_thread_of = this;
  constexpr size_t max_batch = 64;
  event_base* buf[max_batch];
  for (;;) {
    auto n = output_.wait_dequeue_bulk_timed(buf, max_batch,
                                             std::chrono::milliseconds(50));
    size_t delivered = 0;
    for (size_t i = 0; i < n; ++i) {
      if (buf[i] == nullptr) { // stop's sentinel
        consumer_stop_.store(true, std::memory_order_release);
        continue;
      }
      event_ptr ev{buf[i]};
      try {
        out_(*ev);
      } catch (const std::exception& e) {
        log_.write(log_level::error, "output callback threw for seq "
                                       + std::to_string(ev->seq) + ": "
                                       + e.what());
      } catch (...) {
        log_.write(log_level::error, "output callback threw for seq "
                                       + std::to_string(ev->seq));
      }
      ++delivered;
    }
    if (delivered > 0)
      credit(delivered);
    // `stop` enqueues its sentinel after the actors ended: nothing follows.
    if (consumer_stop_.load(std::memory_order_acquire))
      return;
  }
}

bool engine::try_pull(event_ptr& out) {
  event_base* p = nullptr;
  if (out_ || !output_.try_dequeue(p) || p == nullptr)
    return false;
  out.reset(p);
  credit(1);
  return true;
}

bool engine::pull(event_ptr& out, std::chrono::nanoseconds timeout) {
  event_base* p = nullptr;
  if (out_)
    return false;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout);
  if (!output_.wait_dequeue_timed(p, us.count()) || p == nullptr)
    return false;
  out.reset(p);
  credit(1);
  return true;
}

bool engine::drain(std::chrono::nanoseconds timeout) {
  auto all = [this] {
    return next_seq_.load(std::memory_order_acquire);
  };
  auto settled = wait_until(deadline_after(timeout), [&] {
    return delivered_.load(std::memory_order_acquire)
             + lost_.load(std::memory_order_acquire)
           == all();
  });
  return settled && delivered_.load(std::memory_order_acquire) == all();
}

// -- shutdown ----------------------------------------------------------------

void engine::abandon(event_ptr ev, const char* stage) {
  if (!ev)
    return;
  std::lock_guard<std::mutex> guard{abandoned_mtx_};
  abandoned_.push_back(unfinished_event{ev->seq, ev->k, stage});
  if (cfg_.park == park_mode::sqlite && ev->status == outcome::pending)
    to_keep_.push_back(std::move(ev));
}

void engine::actor_started() noexcept {
  live_actors_.fetch_add(1, std::memory_order_seq_cst);
}

void engine::actor_stopped() noexcept {
  live_actors_.fetch_sub(1, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> guard{wait_mtx_}; }
    wait_cv_.notify_all();
  }
}

stop_report engine::stop() {
  if (stopped_.exchange(true, std::memory_order_seq_cst))
    return report_;
  // First: no scrape may read an engine whose actors are ending (closing
  // waits for a scrape in progress).
  metrics_.reset();
  backlog_.wake_all();
  { std::lock_guard<std::mutex> guard{wait_mtx_}; }
  wait_cv_.notify_all();
  // Let submits that passed the stopped check finish enqueueing.
  while (inside_submit_.load(std::memory_order_acquire) != 0)
    std::this_thread::yield();
  if (supervisor_)
    caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  if (sink_)
    caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
  wait_until(deadline_after(forever), [this] {
    return live_actors_.load(std::memory_order_acquire) == 0;
  });
  supervisor_ = nullptr;
  sink_ = nullptr;
  if (consumer_.joinable()) {
    output_.enqueue(nullptr);
    consumer_.join();
  }
  event_base* p = nullptr;
  while (ingress_.try_dequeue(p))
    abandon(event_ptr{p}, "queued");
  for (auto& box : inboxes_) {
    box->actor = nullptr;
    while (box->events.try_dequeue(p))
      abandon(event_ptr{p}, "queued");
  }
  while (output_.try_dequeue(p))
    if (p)
      abandon(event_ptr{p}, "completed");
  report_.accepted = next_seq_.load();
  report_.delivered = delivered_.load();
  {
    std::lock_guard<std::mutex> guard{abandoned_mtx_};
    report_.unfinished = std::move(abandoned_);
    abandoned_.clear();
  }
  std::sort(report_.unfinished.begin(), report_.unfinished.end(),
            [](auto& x, auto& y) { return x.seq < y.seq; });
  keep_unfinished();
  spill_.reset(); // the sink read back what it held there: remove the file
  return report_;
}

keylane::stats engine::snapshot() const {
  keylane::stats s;
  auto r = std::memory_order_relaxed;
  s.accepted = next_seq_.load(r);
  s.delivered = delivered_.load(r);
  s.rejected = rejected_.load(r);
  s.ok = pub_.ok.load(r);
  s.skipped = pub_.skipped.load(r);
  s.failed = pub_.failed.load(r);
  s.parked = pub_.parked.load(r);
  s.retries = pub_.retries.load(r);
  s.replayed = pub_.replayed.load(r);
  s.active_lanes = pub_.active_lanes.load(r);
  s.peak_active_lanes = pub_.peak_active_lanes.load(r);
  s.waiting_keys = pub_.waiting_keys.load(r);
  s.lanes_spawned = pub_.lanes_spawned.load(r);
  s.lanes_retired = pub_.lanes_retired.load(r);
  s.sink_buffered = pub_.sink_buffered.load(r);
  s.peak_sink_buffered = pub_.peak_sink_buffered.load(r);
  s.awaited_seq = pub_.awaited_seq.load(r);
  s.ingress_depth = ingress_.size_approx();
  s.window = window_.load(r);
  s.spilled = pub_.spilled.load(r);
  s.spill_held = pub_.spill_held.load(r);
  s.spill_bytes = pub_.spill_bytes.load(r);
  s.peak_spill_held = pub_.peak_spill_held.load(r);
  s.latency = pub_.latency.snapshot();
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
