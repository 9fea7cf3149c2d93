// SPDX-License-Identifier: Apache-2.0
// How a connection reaches its QuickFIX session follows QuickFIX 1.15's own
// SocketConnection::read: the first message must be a Logon of a session
// of this port that no other connection holds (Session::lookupSession,
// isSessionRegistered, Acceptor::getSession's 35=A check), the session
// gets this connection as its Responder, takes the message, and is then
// registered; on close the session is told (Session::disconnect) and
// unregistered. What differs is the framing (fix_framer, bounded) and the
// limits before logon.

#include "fix_connection.hpp"

#include <algorithm>
#include <cerrno>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <quickfix/Exceptions.h>
#include <quickfix/FieldNumbers.h>
#include <quickfix/Message.h>
#include <quickfix/Session.h>

namespace exchange {
namespace fix {

fix_connection::fix_connection(int fd, const std::set<FIX::SessionID>& sessions,
                               const gateway_limits& limits, int epoll_fd,
                               int wake_fd, clock::time_point now)
  : fd_(fd), sessions_(sessions), limits_(limits), epoll_fd_(epoll_fd),
    wake_fd_(wake_fd),
    logon_deadline_(now + std::chrono::milliseconds(limits.logon_timeout_ms)),
    framer_(limits.logon_bytes) {}

fix_connection::~fix_connection() { close(); }

close_reason fix_connection::on_readable() {
  size_t room = framer_.space_size();
  if (!logged_on_)
    room = std::min(room, limits_.logon_bytes - pre_logon_read_);
  // Before logon: the budget is spent. After it the buffer always has
  // room (it holds at most the start of one message that fits), so this
  // guards a recv of 0 bytes being taken for a close.
  if (room == 0)
    return logged_on_ ? close_reason::oversized : close_reason::pre_logon;
  ssize_t n = ::recv(fd_, framer_.space(), room, 0);
  if (n == 0)
    return close_reason::peer;
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
             ? close_reason::none
             : close_reason::peer;
  framer_.commit(static_cast<size_t>(n));
  if (!logged_on_)
    pre_logon_read_ += static_cast<size_t>(n);
  for (;;) {
    const char* msg = nullptr;
    size_t len = 0;
    switch (framer_.next(msg, len)) {
      case fix_framer::result::message: {
        close_reason r = deliver(std::string(msg, len));
        if (r != close_reason::none)
          return r;
        if (disconnect_asked_.load(std::memory_order_acquire))
          return close_reason::session;
        break;
      }
      case fix_framer::result::need_more:
        // A budget spent on anything but a whole Logon ends it.
        return !logged_on_ && pre_logon_read_ >= limits_.logon_bytes
                 ? close_reason::pre_logon
                 : close_reason::none;
      case fix_framer::result::too_long:
        return close_reason::oversized;
      case fix_framer::result::garbled:
        // A stranger gets no second guess; a logged-on session's garbled
        // message is ignored, as FIX says, and its sequence gap asks for
        // a resend.
        if (!logged_on_)
          return close_reason::pre_logon;
        break;
    }
  }
}

close_reason fix_connection::deliver(const std::string& msg) {
  if (session_ == nullptr)
    return first_message(msg);
  try {
    session_->next(msg, FIX::UtcTimeStamp());
  } catch (const FIX::InvalidMessage&) {
    // QuickFIX's SocketConnection drops only a connection not logged on.
    if (!session_->isLoggedOn())
      return close_reason::session;
  }
  if (!logged_on_ && session_->isLoggedOn()) {
    logged_on_ = true;
    framer_.set_capacity(limits_.message_bytes);
  }
  return close_reason::none;
}

close_reason fix_connection::first_message(const std::string& msg) {
  FIX::Session* s = FIX::Session::lookupSession(msg, true);
  if (s == nullptr)
    return close_reason::pre_logon;
  const FIX::SessionID& id = s->getSessionID();
  if (FIX::Session::isSessionRegistered(id) || sessions_.count(id) == 0)
    return close_reason::pre_logon;
  FIX::Message header;
  if (!header.setStringHeader(msg)
      || !header.getHeader().isSetField(FIX::FIELD::MsgType)
      || header.getHeader().getField(FIX::FIELD::MsgType) != "A")
    return close_reason::pre_logon;
  s->setResponder(this);
  session_ = s;
  try {
    s->next(msg, FIX::UtcTimeStamp());
  } catch (const FIX::InvalidMessage&) {
    return close_reason::pre_logon;
  }
  registered_ = FIX::Session::registerSession(id) != nullptr;
  if (s->isLoggedOn()) {
    logged_on_ = true;
    framer_.set_capacity(limits_.message_bytes);
  }
  return close_reason::none;
}

close_reason fix_connection::on_tick(clock::time_point now, bool session_timer) {
  if (disconnect_asked_.load(std::memory_order_acquire))
    return close_reason::session;
  if (!logged_on_ && now >= logon_deadline_)
    return close_reason::logon_timeout;
  if (session_timer && session_ != nullptr) {
    session_->next(FIX::UtcTimeStamp());
    if (disconnect_asked_.load(std::memory_order_acquire))
      return close_reason::session;
  }
  return close_reason::none;
}

bool fix_connection::send(const std::string& msg) {
  std::lock_guard<std::mutex> lock(out_m_);
  if (closed_ || disconnect_asked_.load(std::memory_order_relaxed))
    return false;
  if (out_.empty()) {
    // The caller's thread writes what the socket takes: no hop to the
    // acceptor's thread on the latency path.
    ssize_t n = ::send(fd_, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(msg.size()))
      return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      disconnect_asked_.store(true, std::memory_order_release);
      uint64_t one = 1;
      (void)!::write(wake_fd_, &one, sizeof one);
      return false;
    }
    const size_t taken = n > 0 ? static_cast<size_t>(n) : 0;
    if (msg.size() - taken > limits_.unsent_bytes)
      return cut_unread_locked();
    out_.append(msg, taken, std::string::npos);
  } else {
    if (out_.size() + msg.size() > limits_.unsent_bytes)
      return cut_unread_locked();
    out_ += msg;
  }
  if (!want_write_) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.fd = fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
    want_write_ = true;
  }
  return true;
}

close_reason fix_connection::on_writable() {
  std::lock_guard<std::mutex> lock(out_m_);
  return flush_locked() ? close_reason::none : close_reason::peer;
}

bool fix_connection::flush_locked() {
  if (closed_)
    return true;
  while (!out_.empty()) {
    ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return true;
      return false;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  if (want_write_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
    want_write_ = false;
  }
  return true;
}

bool fix_connection::cut_unread_locked() {
  cut_unread_.store(true);
  disconnect();
  return false;
}

// Any thread (QuickFIX calls it from Session::disconnect): the acceptor's
// thread closes the socket at its next look.
void fix_connection::disconnect() {
  if (disconnect_asked_.exchange(true, std::memory_order_acq_rel))
    return;
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void fix_connection::close() {
  {
    std::lock_guard<std::mutex> lock(out_m_);
    if (closed_)
      return;
    flush_locked(); // a Logout QuickFIX just queued, if the socket takes it
    closed_ = true;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd_, nullptr);
    ::close(fd_);
  }
  // After the socket is gone, so no send can reach it; Session::disconnect
  // clears the session's Responder under the session's lock.
  if (session_ != nullptr) {
    session_->disconnect();
    if (registered_)
      FIX::Session::unregisterSession(session_->getSessionID());
  }
}

} // namespace fix
} // namespace exchange
