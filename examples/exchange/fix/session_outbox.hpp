// SPDX-License-Identifier: Apache-2.0
#pragma once

// One FIX session's outgoing reports, sent by a thread of the session's
// own, so that a client who stops reading blocks only that thread (it
// waits for the client to answer a TestRequest, gateway_application) and
// never the matcher's output, which serves every session. C++14.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "../orders.hpp"

namespace exchange {
namespace fix {

class session_outbox {
public:
  using send_fn = std::function<void(const exec_report&)>;
  using cut_fn = std::function<void()>;

  /// `send` sends one report (on this outbox's thread); `cut` ends the
  /// session's connection once reports were dropped for it. `limit` is
  /// the most reports held for the session.
  session_outbox(size_t limit, send_fn send, cut_fn cut);
  ~session_outbox() { stop(); }

  session_outbox(const session_outbox&) = delete;
  session_outbox& operator=(const session_outbox&) = delete;

  enum class pushed { queued, dropped, stopped };

  /// Queues `r`; `dropped` if `limit` reports wait already (or one was
  /// dropped since the logon): the session will be cut off as soon as its
  /// socket takes writes again, since its client has missed reports and
  /// must learn it; `stopped` after stop().
  pushed push(const exec_report& r);

  /// A new logon: reports are taken again.
  void reset();

  /// Sends what is queued (fast once the session is down), cuts the
  /// connection if reports were dropped, then ends the thread. Idempotent.
  void stop();

private:
  void run();

  const size_t limit_;
  send_fn send_;
  cut_fn cut_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<exec_report> queue_;
  bool dropped_ = false;  // reports were dropped since the last logon
  bool cut_done_ = false; // and the connection was cut for it
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace fix
} // namespace exchange
