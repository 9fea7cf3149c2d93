// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/output.hpp"

#include <cassert>
#include <exception>
#include <string>
#include <utility>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/memory_release.hpp"

namespace keylane::detail {

namespace {

// How long the consumer looks for more work before it sleeps: a waiting
// consumer that spins for tens of microseconds takes that time from the
// workers that would fill its queue on a machine with as many cores as
// keylane has workers.
constexpr int spins_before_sleep = 256;

// How long a worker may run the callback for the sleeping consumer (about
// two wake-ups' worth here): past it, handing the rest on costs less than
// the worker's time.
constexpr auto inline_budget = std::chrono::microseconds{20};

void bump(std::atomic<uint64_t>& x, uint64_t n) noexcept {
  x.store(x.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

} // namespace

output::output(output_fn fn, bool on_sink, bool inline_when_idle,
               ingress& in, waiter& w, logger& log, counters& pub,
               const live_settings& live)
  : fn_(std::move(fn)),
    on_sink_(on_sink && fn_),
    inline_when_idle_(inline_when_idle && fn_ && !on_sink_),
    ingress_(in),
    waiter_(w),
    log_(log),
    pub_(pub),
    live_(live) {
}

output::~output() {
  for (auto& ev : finish())
    ev.reset();
}

void output::start(std::function<void()> mark) {
  if (!fn_ || on_sink_)
    return;
  consumer_ = std::thread{[this, mark = std::move(mark)] {
    mark();
    consume_loop();
  }};
}

template <class Note>
void output::count_each(size_t n, outcome_tally& t, Note&& note_at) {
  // Single writer: the actor that owns `t` (see outcome_tally), before the
  // events leave, so whoever sees one sees it counted.
  uint64_t ok = 0, skipped = 0, failed = 0, parked = 0, retries = 0;
  for (size_t i = 0; i < n; ++i) {
    const outcome_note& x = note_at(i);
    switch (x.status) {
      case outcome::ok: ++ok; break;
      case outcome::skipped: ++skipped; break;
      case outcome::parked: ++parked; break;
      default: ++failed; break;
    }
    if (x.attempts > 1)
      retries += x.attempts - 1;
  }
  bump(t.ok, ok);
  bump(t.skipped, skipped);
  bump(t.failed, failed);
  bump(t.parked, parked);
  bump(t.retries, retries);
  if (live_.record_latency()) {
    auto now = clock::now(); // one clock read per batch
    for (size_t i = 0; i < n; ++i)
      t.latency.record(now - note_at(i).submitted);
  }
}

void output::count(event_base** evs, size_t n, outcome_tally& t) {
  outcome_note x{};
  count_each(n, t, [&](size_t i) -> const outcome_note& {
    return x = outcome_note::of(*evs[i]);
  });
}

void output::count(const outcome_note* notes, size_t n, outcome_tally& t) {
  count_each(n, t, [&](size_t i) -> const outcome_note& { return notes[i]; });
}

void output::emit(std::vector<event_ptr>& evs, outcome_tally* tally) {
  static_assert(sizeof(event_ptr) == sizeof(event_base*),
                "event_ptr must be a bare pointer to be handed on in place");
  // `emit` copies the pointers (and may even delete the events, on_sink);
  // only then does `evs` let go of them.
  emit(reinterpret_cast<event_base**>(evs.data()), evs.size(), tally);
  for (auto& ev : evs)
    (void) ev.release();
  evs.clear();
}

void output::emit(std::vector<event_ptr>& evs,
                  std::vector<outcome_note>& notes, outcome_tally& tally) {
  assert(notes.size() == evs.size());
  if (evs.empty())
    return;
  count(notes.data(), notes.size(), tally);
  notes.clear();
  emit(evs, nullptr);
}

void output::emit(event_base** evs, size_t n, outcome_tally* tally) {
  if (n == 0)
    return;
  if (tally)
    count(evs, n, *tally);
  std::unique_lock<std::mutex> guard{mtx_};
  if (inline_when_idle_ && consumer_asleep_ && !delivering_
      && head_ == queued_.size()) {
    delivering_ = true;
    guard.unlock();
    emit_inline(evs, n);
    return;
  }
  queued_.insert(queued_.end(), evs, evs + n);
  nonempty_.store(true, std::memory_order_release);
  if (!on_sink_) {
    if (delivering_)
      return; // the worker delivering hands it on after its own
    bool wake = consumer_asleep_ || pullers_ > 0;
    guard.unlock();
    if (wake)
      ready_.notify_all();
    return;
  }
  if (delivering_)
    return; // the thread delivering takes this batch after its own
  delivering_ = true;
  while (head_ < queued_.size()) {
    // `spare_` is the deliverer's alone; swapping keeps both buffers.
    spare_.swap(queued_);
    auto from = std::exchange(head_, 0);
    nonempty_.store(false, std::memory_order_relaxed);
    guard.unlock();
    run(spare_.data() + from, spare_.size() - from);
    spare_.clear();
    guard.lock();
  }
  delivering_ = false;
}

void output::emit_inline(event_base** evs, size_t n) {
  auto until = clock::now() + inline_budget;
  auto done = run_until(evs, n, until);
  std::unique_lock<std::mutex> guard{mtx_};
  // What is left, and what others queued meanwhile, in that order.
  queued_.insert(queued_.begin() + static_cast<std::ptrdiff_t>(head_),
                 evs + done, evs + n);
  while (head_ < queued_.size() && clock::now() < until) {
    spare_.swap(queued_);
    auto from = std::exchange(head_, 0);
    guard.unlock();
    auto ran = run_until(spare_.data() + from, spare_.size() - from, until);
    guard.lock();
    queued_.insert(queued_.begin(), spare_.begin()
                                      + static_cast<std::ptrdiff_t>(from + ran),
                   spare_.end());
    spare_.clear();
  }
  delivering_ = false;
  if (head_ == queued_.size())
    return;
  nonempty_.store(true, std::memory_order_release);
  bool wake = consumer_asleep_ || pullers_ > 0;
  guard.unlock();
  if (wake)
    ready_.notify_all();
}

size_t output::run_until(event_base** evs, size_t n, clock::time_point until) {
  size_t i = 0;
  while (i < n) {
    call(evs[i++]);
    if (clock::now() >= until)
      break;
  }
  if (i > 0)
    deliver(i);
  return i;
}

void output::deliver(size_t n) {
  // Counted first: `credit` may wake `drain`, which reads this count.
  delivered_.fetch_add(n, std::memory_order_seq_cst);
  ingress_.credit(n);
}

void output::call(event_base* raw) {
  event_ptr ev{raw};
  try {
    fn_(*ev);
  } catch (const std::exception& e) {
    log_.write(log_level::error, "output callback threw for seq "
                                   + std::to_string(ev->seq) + ": "
                                   + e.what());
  } catch (...) {
    log_.write(log_level::error, "output callback threw for seq "
                                   + std::to_string(ev->seq));
  }
}

void output::run(event_base** evs, size_t n) {
  for (size_t i = 0; i < n; ++i)
    call(evs[i]);
  if (n > 0)
    deliver(n);
}

void output::consume_loop() {
  std::vector<event_base*> batch;
  bool trimmed = true; // nothing delivered since the last release
  std::unique_lock<std::mutex> guard{mtx_};
  for (;;) {
    if (head_ == queued_.size() && !stop_) {
      guard.unlock();
      for (int i = 0; i < spins_before_sleep
                      && !nonempty_.load(std::memory_order_acquire);
           ++i) {
      }
      guard.lock();
    }
    // A worker delivering for it (emit_inline) hands on what is left.
    while ((head_ == queued_.size() || delivering_) && !stop_) {
      consumer_asleep_ = true;
      auto woke = ready_.wait_for(guard, release_after) == std::cv_status::no_timeout;
      consumer_asleep_ = false;
      if (!woke && head_ == queued_.size() && !delivering_ && !trimmed) {
        // Idle for `release_after`: what the callback allocated goes back.
        trimmed = true;
        guard.unlock();
        release_free_memory();
        guard.lock();
      }
    }
    if (head_ == queued_.size())
      return; // stopped, and everything emitted before it was delivered
    batch.swap(queued_);
    auto from = head_;
    head_ = 0;
    nonempty_.store(false, std::memory_order_relaxed);
    guard.unlock();
    trimmed = false;
    run(batch.data() + from, batch.size() - from);
    batch.clear();
    guard.lock();
  }
}

bool output::take_one(event_ptr& out) {
  if (head_ == queued_.size())
    return false;
  out.reset(queued_[head_++]);
  if (head_ == queued_.size()) {
    queued_.clear();
    head_ = 0;
    nonempty_.store(false, std::memory_order_relaxed);
  }
  return true;
}

bool output::try_pull(event_ptr& out) {
  if (fn_)
    return false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (!take_one(out))
      return false;
  }
  deliver(1);
  return true;
}

bool output::pull(event_ptr& out, std::chrono::nanoseconds timeout) {
  if (fn_)
    return false;
  {
    std::unique_lock<std::mutex> guard{mtx_};
    ++pullers_;
    ready_.wait_for(guard, timeout,
                    [&] { return head_ != queued_.size() || pulls_ended_; });
    --pullers_;
    if (!take_one(out))
      return false;
  }
  deliver(1);
  return true;
}

void output::end_pulls() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    pulls_ended_ = true;
  }
  ready_.notify_all();
}

void output::forget(size_t n) {
  lost_.fetch_add(n, std::memory_order_seq_cst);
  ingress_.credit(n);
  waiter_.wake(); // `drain` counts lost events as settled
}

std::vector<event_ptr> output::finish() {
  if (consumer_.joinable()) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stop_ = true;
    }
    ready_.notify_all();
    consumer_.join();
  }
  std::vector<event_ptr> left;
  std::lock_guard<std::mutex> guard{mtx_};
  for (size_t i = head_; i < queued_.size(); ++i)
    left.emplace_back(queued_[i]);
  queued_.clear();
  head_ = 0;
  return left;
}

} // namespace keylane::detail
