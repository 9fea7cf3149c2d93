#include "keylane/detail/output.hpp"

#include <exception>
#include <string>

#include "keylane/detail/memory_release.hpp"

namespace keylane::detail {

output::output(output_fn fn, bool on_sink, ingress& in, waiter& w,
               logger& log)
  : fn_(std::move(fn)),
    on_sink_(on_sink && fn_),
    ingress_(in),
    waiter_(w),
    log_(log),
    token_(std::make_unique<producer_token>(queue_)) {
}

output::~output() {
  finish();
}

void output::start(std::function<void()> mark) {
  if (!fn_ || on_sink_)
    return;
  consumer_ = std::thread{[this, mark = std::move(mark)] {
    mark();
    consume_loop();
  }};
}

void output::emit(event_base** evs, size_t n) {
  if (on_sink_)
    run(evs, n);
  else
    queue_.enqueue_bulk(*token_, evs, n);
}

void output::deliver(size_t n) {
  // Counted first: `credit` may wake `drain`, which reads this count.
  delivered_.fetch_add(n, std::memory_order_seq_cst);
  ingress_.credit(n);
}

void output::run(event_base** evs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    event_ptr ev{evs[i]};
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
  if (n > 0)
    deliver(n);
}

void output::consume_loop() {
  constexpr size_t max_batch = 64;
  event_base* buf[max_batch];
  bool trimmed = true; // nothing delivered since the last release
  for (;;) {
    auto n = queue_.wait_dequeue_bulk_timed(buf, max_batch, release_after);
    if (n == 0 && !trimmed) {
      // Idle for `release_after`: what the callback allocated goes back.
      trimmed = true;
      release_free_memory();
    }
    trimmed = trimmed && n == 0;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      if (buf[i] == nullptr) // finish's sentinel
        stop_.store(true, std::memory_order_release);
      else
        buf[k++] = buf[i];
    }
    run(buf, k);
    // `finish` enqueues its sentinel after the sink ended: nothing follows.
    if (stop_.load(std::memory_order_acquire))
      return;
  }
}

bool output::try_pull(event_ptr& out) {
  event_base* p = nullptr;
  if (fn_ || !queue_.try_dequeue(p) || p == nullptr)
    return false;
  out.reset(p);
  deliver(1);
  return true;
}

bool output::pull(event_ptr& out, std::chrono::nanoseconds timeout) {
  event_base* p = nullptr;
  if (fn_)
    return false;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout);
  if (!queue_.wait_dequeue_timed(p, us.count()) || p == nullptr)
    return false;
  out.reset(p);
  deliver(1);
  return true;
}

void output::forget(size_t n) {
  lost_.fetch_add(n, std::memory_order_seq_cst);
  ingress_.credit(n);
  waiter_.wake(); // `drain` counts lost events as settled
}

std::vector<event_ptr> output::finish() {
  if (consumer_.joinable()) {
    queue_.enqueue(nullptr);
    consumer_.join();
  }
  std::vector<event_ptr> left;
  event_base* p = nullptr;
  while (queue_.try_dequeue(p))
    if (p)
      left.emplace_back(p);
  return left;
}

} // namespace keylane::detail
