// SPDX-License-Identifier: Apache-2.0
#include "session_outbox.hpp"

namespace exchange {
namespace fix {

session_outbox::session_outbox(size_t limit, send_fn send, cut_fn cut)
  : limit_(limit), send_(std::move(send)), cut_(std::move(cut)),
    thread_([this] { run(); }) {}

session_outbox::pushed session_outbox::push(const exec_report& r) {
  std::lock_guard<std::mutex> lock(m_);
  if (stopping_)
    return pushed::stopped;
  if (dropped_ || queue_.size() >= limit_) {
    // Once one report is dropped, later ones are too: the client must not
    // see a stream with a hole in it.
    dropped_ = true;
    cv_.notify_one();
    return pushed::dropped;
  }
  queue_.push_back(r);
  if (queue_.size() == 1)
    cv_.notify_one();
  return pushed::queued;
}

void session_outbox::reset() {
  std::lock_guard<std::mutex> lock(m_);
  dropped_ = false;
  cut_done_ = false;
}

void session_outbox::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable())
    thread_.join();
}

void session_outbox::run() {
  std::deque<exec_report> batch;
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [this] {
      return stopping_ || !queue_.empty() || (dropped_ && !cut_done_);
    });
    if (!queue_.empty()) {
      batch.swap(queue_);
      lock.unlock();
      for (const exec_report& r : batch)
        send_(r);
      batch.clear();
      lock.lock();
      continue;
    }
    if (dropped_ && !cut_done_) {
      // Everything before the drop is out: the connection goes (at a stop
      // too). reset() at the next logon takes reports again.
      cut_done_ = true;
      lock.unlock();
      cut_();
      lock.lock();
      continue;
    }
    if (stopping_)
      return;
  }
}

} // namespace fix
} // namespace exchange
