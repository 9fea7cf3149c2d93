#include "keylane/detail/lane.hpp"

#include <algorithm>
#include <exception>

#include <caf/all.hpp>

#include "keylane/detail/engine.hpp"

namespace keylane::detail {

lane::lane(caf::actor_config& cfg, std::shared_ptr<args> a)
  : caf::event_based_actor(cfg),
    eng_(a->eng),
    supervisor_(std::move(a->supervisor)),
    sink_(std::move(a->sink)),
    cfg_(a->cfg),
    batch_limit_(std::max<size_t>(1, a->cfg->lane_batch)),
    rng_(a->k.hash() ^ reinterpret_cast<uintptr_t>(this)) {
  eng_->actor_started();
  out_ = std::make_shared<event_batch>(eng_, "completed");
  bind(*a);
}

lane::~lane() = default;

const settings& lane::policy() {
  auto gen = eng_->live_generation();
  if (gen != cfg_gen_) {
    cfg_ = eng_->live();
    cfg_gen_ = gen;
  }
  return *cfg_;
}

void lane::bind(args& a) {
  key_ = std::move(a.k);
  activation_ = a.activation;
  handler_ = std::move(a.handler);
  broken_ = std::move(a.handler_error);
  parking_ = false;
  idle_reported_ = false;
  finished_ = 0;
  if (a.first)
    take(std::move(a.first));
}

void lane::activate() {
  if (handler_) {
    handler_->self_ = this;
    handler_->key_ = &key_;
    try {
      handler_->on_activate(key_);
    } catch (const std::exception& e) {
      broken_ = std::string{"on_activate threw: "} + e.what();
    } catch (...) {
      broken_ = "on_activate threw a non-standard exception";
    }
  } else if (broken_.empty()) {
    broken_ = "no handler";
  }
}

void lane::retire(bool keep) {
  if (handler_) {
    try {
      handler_->on_retire(key_);
    } catch (...) {
      // State could not be flushed; the events themselves are done.
    }
  }
  // The handler dies before the slot is handed on, so live handler
  // instances never exceed the cap either.
  handler_.reset();
  timers_.clear();
  // A response handler its handler left pending would run for the next
  // key: such a lane is not reused.
  keep = keep && awaited_responses_.empty() && multiplexed_responses_.empty();
  send(supervisor_, retired_atom::value, key_, keep);
  if (!keep)
    quit();
}

caf::behavior lane::make_behavior() {
  activate();
  run();
  return {
    [this](events_atom, batch_ptr& b) {
      take(std::move(b));
      run();
    },
    [this](complete_atom, uint64_t token, uint8_t status, bool permanent,
           std::string& error, result_box_ptr& box) {
      if (!awaiting_ || token != token_ || !current_)
        return; // late (timed out), duplicate, or of an earlier attempt
      if (box)
        box->apply(handler_->result_slot(*current_));
      settle(static_cast<outcome>(status), std::move(error), permanent);
      run();
    },
    [this](timeout_atom, uint64_t token) {
      if (!awaiting_ || token != token_ || !current_)
        return;
      ++token_; // its completion, should it come, is now stale
      settle(outcome::failed,
             "attempt timed out after "
               + std::to_string(policy().attempt_timeout_ms) + " ms",
             false);
      run();
    },
    [this](retry_atom, uint64_t token) {
      if (!awaiting_ || token != token_ || !current_)
        return;
      awaiting_ = false;
      backing_off_ = false;
      invoke_current();
      run();
    },
    [this](resume_atom) {
      resume_pending_ = false;
      run();
    },
    [this](timer_atom, uint64_t id) {
      auto i = timers_.find(id);
      if (i == timers_.end())
        return;
      auto fn = std::move(i->second);
      timers_.erase(i);
      try {
        fn();
      } catch (...) {
        // A throwing timer callback must not kill the lane; the event it
        // belonged to fails when its completion is dropped.
      }
      run();
    },
    [this](retire_atom, bool keep) { retire(keep); },
    [this](locate_atom, uint64_t seq) { locate(seq); },
    [this](bind_atom, args_ptr& a) {
      bind(*a);
      activate();
      run();
    },
  };
}

void lane::take(batch_ptr b) {
  idle_reported_ = false;
  if (parking_) {
    for (auto& ev : b->items)
      ev->error = parked_behind_reason;
    park(b->items);
    b->items.clear();
    return;
  }
  for (auto& ev : b->items)
    queue_.push_back(std::move(ev));
  b->items.clear();
}

void lane::run() {
  size_t budget = batch_limit_;
  while (!awaiting_ && !queue_.empty()) {
    if (budget-- == 0) {
      // Yield the worker thread so other lanes (and our own completions)
      // get a turn; a hot key must not starve the rest.
      if (!resume_pending_) {
        resume_pending_ = true;
        send(this, resume_atom::value);
      }
      break;
    }
    current_ = std::move(queue_.front());
    queue_.pop_front();
    invoke_current();
  }
  bool dry = !awaiting_ && queue_.empty();
  if (dry && !idle_reported_ && !out_->items.empty()) {
    // The sink passes it on with others: no message of its own.
    out_->idle = idle_notice{key_, activation_, finished_};
    idle_reported_ = true;
  }
  flush();
  if (dry)
    report_idle();
}

void lane::invoke_current() {
  ++token_;
  ++current_->attempts;
  attempt_started_ = clock::now();
  if (current_->attempts == 1)
    current_->started = attempt_started_;
  if (!broken_.empty()) {
    // No handler instance in this lane: retrying here cannot help.
    settle(outcome::failed, broken_, true);
    return;
  }
  sync_done_ = false;
  sync_status_ = outcome::pending;
  sync_permanent_ = false;
  sync_error_.clear();
  sync_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  std::string thrown;
  try {
    handler_->invoke(*current_, completion_core{this, token_,
                                                handler_->result_slot(*current_)});
  } catch (const std::exception& e) {
    thrown = std::string{"handler threw: "} + e.what();
  } catch (...) {
    thrown = "handler threw a non-standard exception";
  }
  sync_thread_.store(std::thread::id{}, std::memory_order_relaxed);
  if (!thrown.empty()) {
    // A completion finished before the throw keeps its outcome; one dropped
    // by the unwinding reports the exception instead.
    if (sync_done_ && sync_status_ != outcome::failed)
      settle(sync_status_, std::move(sync_error_), false);
    else
      settle(outcome::failed, std::move(thrown), false);
  } else if (sync_done_) {
    settle(sync_status_, std::move(sync_error_), sync_permanent_);
  } else {
    awaiting_ = true;
    if (auto ms = policy().attempt_timeout_ms; ms > 0)
      delayed_send(this, std::chrono::milliseconds(ms),
                   timeout_atom::value, token_);
  }
}

void lane::settle(outcome status, std::string error, bool permanent) {
  if (status != outcome::failed) {
    finish_current(status, std::move(error));
    return;
  }
  const auto& pol = policy();
  if (permanent || current_->attempts >= pol.max_attempts) {
    if (pol.park == park_mode::none)
      finish_current(status, std::move(error));
    else
      start_parking(std::move(error));
    return;
  }
  // Retry at the head: the key's later events keep waiting behind it.
  current_->error = std::move(error);
  awaiting_ = true;
  backing_off_ = true;
  ++token_; // a late completion of the failed attempt is now stale
  auto delay = backoff_delay(pol, current_->attempts, rng_());
  delayed_send(this, delay, retry_atom::value, token_);
}

void lane::finish_sync(uint64_t token, outcome status, std::string error,
                       bool permanent) noexcept {
  if (token != token_ || sync_done_)
    return;
  sync_done_ = true;
  sync_status_ = status;
  sync_permanent_ = permanent;
  sync_error_ = std::move(error);
}

void lane::finish_current(outcome status, std::string error) {
  awaiting_ = false;
  if (current_->park_id > unpark_through_)
    unpark_through_ = current_->park_id;
  current_->error = status == outcome::failed ? std::move(error) : std::string{};
  current_->status = status;
  ++finished_;
  out_->items.push_back(std::move(current_));
}

void lane::start_parking(std::string reason) {
  awaiting_ = false;
  ++token_; // a late completion of the last attempt is now stale
  current_->error = std::move(reason);
  std::vector<event_ptr> evs;
  evs.reserve(queue_.size() + 1);
  evs.push_back(std::move(current_));
  for (auto& ev : queue_) {
    ev->error = parked_behind_reason;
    evs.push_back(std::move(ev));
  }
  queue_.clear();
  park(evs);
  parking_ = true;
  send(supervisor_, parked_atom::value, key_);
}

void lane::park(std::vector<event_ptr>& evs) {
  if (evs.empty())
    return;
  eng_->park(evs.data(), evs.size());
  for (auto& ev : evs) {
    ++finished_;
    out_->items.push_back(std::move(ev));
  }
}

void lane::flush() {
  if (unpark_through_ != 0) {
    // Before the outputs go: whoever sees them sees the store without them.
    eng_->unpark_through(key_, unpark_through_);
    unpark_through_ = 0;
  }
  if (out_->items.empty())
    return;
  eng_->release_backlog(key_, out_->items.size());
  auto next = std::make_shared<event_batch>(eng_, "completed");
  send(sink_, events_atom::value, std::move(out_));
  out_ = std::move(next);
}

void lane::report_idle() {
  if (idle_reported_)
    return;
  idle_reported_ = true;
  send(supervisor_, idle_atom::value, key_, activation_, finished_);
}

void lane::schedule(caf::timespan delay, std::function<void()> fn) {
  auto id = ++next_timer_;
  timers_.emplace(id, std::move(fn));
  delayed_send(this, delay, timer_atom::value, id);
}

void lane::on_exit() {
  if (current_)
    eng_->abandon(std::move(current_), "running");
  for (auto& ev : queue_)
    eng_->abandon(std::move(ev), "queued");
  queue_.clear();
  if (out_)
    for (auto& ev : out_->items)
      eng_->abandon(std::move(ev), "completed");
  out_.reset();
  timers_.clear();
  // The handler may hold completions that pin this actor: break the cycle.
  handler_.reset();
  supervisor_ = nullptr;
  sink_ = nullptr;
  eng_->actor_stopped();
}

} // namespace keylane::detail
