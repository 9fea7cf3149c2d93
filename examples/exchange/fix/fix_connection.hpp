// SPDX-License-Identifier: Apache-2.0
#pragma once

// One accepted FIX connection of fix_acceptor: its socket, its framer and
// the QuickFIX session it logged on to. C++14 and QuickFIX.

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>

#include <quickfix/Responder.h>
#include <quickfix/SessionID.h>

#include "fix_framer.hpp"
#include "fix_gateway.hpp"

namespace FIX {
class Session;
}

namespace exchange {
namespace fix {

/// Why a connection ends.
enum class close_reason {
  none,          ///< keep it
  peer,          ///< the client closed it, or the socket failed
  session,       ///< QuickFIX disconnected it (Logout, timeouts, a bad Logon)
  oversized,     ///< a BodyLength past the buffer
  pre_logon,     ///< before logon: past the byte budget, garbled, or its
                 ///< first message not a Logon of a free session
  logon_timeout, ///< no Logon in time
};

/// An accepted socket (non-blocking) and what it read. The acceptor's
/// thread reads, frames, calls QuickFIX and closes; `send` and
/// `disconnect`, QuickFIX's Responder, may come from any thread (a
/// session's outbox sends from its own): they take this connection's
/// mutex, which also orders them against `close`, so nothing writes to a
/// closed or reused descriptor. `send` writes at once what the socket
/// takes and leaves the rest for the acceptor's thread (EPOLLOUT).
class fix_connection final : public FIX::Responder {
public:
  using clock = std::chrono::steady_clock;

  /// `sessions`: the sessions of the port it came in on; `epoll_fd` the
  /// acceptor's, for EPOLLOUT; `wake_fd` an eventfd to wake the acceptor
  /// when another thread asks for a disconnect.
  fix_connection(int fd, const std::set<FIX::SessionID>& sessions,
                 const gateway_limits& limits, int epoll_fd, int wake_fd,
                 clock::time_point now);
  ~fix_connection() override;

  fix_connection(const fix_connection&) = delete;
  fix_connection& operator=(const fix_connection&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }

  /// On EPOLLIN: one read, then every whole message to QuickFIX.
  [[nodiscard]] close_reason on_readable();

  /// On EPOLLOUT: writes what `send` left.
  [[nodiscard]] close_reason on_writable();

  /// Once a second or so: QuickFIX's timers (heartbeats, LogoutTimeout),
  /// the logon deadline and disconnects asked for by other threads.
  [[nodiscard]] close_reason on_tick(clock::time_point now, bool session_timer);

  /// Closes the socket and tells QuickFIX; the acceptor's thread, once.
  void close();

  /// True if it was dropped for `gateway_limits::unsent_bytes`.
  [[nodiscard]] bool cut_unread() const noexcept { return cut_unread_.load(); }

  /// Bytes its framer threw away.
  [[nodiscard]] uint64_t discarded() const noexcept { return framer_.discarded(); }

  // FIX::Responder
  bool send(const std::string& msg) override;
  void disconnect() override;

private:
  close_reason deliver(const std::string& msg);
  close_reason first_message(const std::string& msg);
  bool flush_locked(); // false: the socket failed
  bool cut_unread_locked(); // false, for send

  const int fd_;
  const std::set<FIX::SessionID>& sessions_;
  const gateway_limits limits_;
  const int epoll_fd_;
  const int wake_fd_;
  const clock::time_point logon_deadline_;
  fix_framer framer_;
  size_t pre_logon_read_ = 0;
  bool logged_on_ = false;    // once its session was logged on
  FIX::Session* session_ = nullptr;
  bool registered_ = false;   // QuickFIX's one-connection-per-session mark
  std::atomic<bool> disconnect_asked_{false};
  std::atomic<bool> cut_unread_{false};

  std::mutex out_m_;           // guards the rest
  std::string out_;            // what the socket did not take yet
  bool want_write_ = false;    // EPOLLOUT armed
  bool closed_ = false;
};

} // namespace fix
} // namespace exchange
