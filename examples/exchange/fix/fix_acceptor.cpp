// SPDX-License-Identifier: Apache-2.0
#include "fix_acceptor.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace exchange {
namespace fix {

namespace {

using clock = fix_connection::clock;

// Deadlines and disconnects asked for by other threads are looked at this
// often; QuickFIX's own timers run every tenth look (1 s, as its
// SocketServer's).
constexpr int tick_ms = 100;
constexpr int ticks_per_session_timer = 10;

bool setting(const FIX::Dictionary& d, const char* key, bool fallback) {
  return d.has(key) ? d.getBool(key) : fallback;
}

int open_listener(int port, bool reuse, std::string& error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int one = 1;
  if (reuse)
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
      || ::listen(fd, SOMAXCONN) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

} // namespace

fix_acceptor::fix_acceptor(FIX::Application& app, FIX::MessageStoreFactory& store,
                           const FIX::SessionSettings& settings,
                           const gateway_limits& limits)
  : limits_(limits), settings_(settings), factory_(app, store, nullptr) {
  for (const FIX::SessionID& id : settings_.getSessions()) {
    const FIX::Dictionary& d = settings_.get(id);
    if (d.getString(FIX::CONNECTION_TYPE) != "acceptor")
      continue;
    sessions_[id] = factory_.create(id, d);
    port_sessions_[d.getInt(FIX::SOCKET_ACCEPT_PORT)].insert(id);
  }
  if (sessions_.empty())
    throw FIX::ConfigError("No sessions defined for acceptor");
}

fix_acceptor::~fix_acceptor() {
  stop();
  for (auto& s : sessions_)
    factory_.destroy(s.second);
}

bool fix_acceptor::start(std::string& error) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    error = std::string("epoll: ") + std::strerror(errno);
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  for (const auto& p : port_sessions_) {
    const FIX::Dictionary& d = settings_.get(*p.second.begin());
    std::string why;
    int fd = open_listener(p.first, setting(d, FIX::SOCKET_REUSE_ADDRESS, true), why);
    if (fd < 0) {
      // QuickFIX's wording, which the smoke test's port retry knows.
      error = "Unable to create, bind, or listen to port "
              + std::to_string(p.first) + " (" + why + ")";
      return false;
    }
    listeners_[fd] = p.first;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

void fix_acceptor::run() {
  std::vector<epoll_event> events(256);
  auto next_tick = clock::now() + std::chrono::milliseconds(tick_ms);
  int ticks = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    auto now = clock::now();
    int wait_ms = now >= next_tick
                    ? 0
                    : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         next_tick - now).count()) + 1;
    int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), wait_ms);
    // Connections first: a descriptor closed here and reused by an accept
    // in the same batch must not get the old one's events.
    bool woken = false;
    std::vector<int> accepting;
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        woken = true;
        continue;
      }
      if (listeners_.count(fd) != 0) {
        accepting.push_back(fd);
        continue;
      }
      auto c = connections_.find(fd);
      if (c == connections_.end())
        continue;
      fix_connection& conn = *c->second;
      const uint32_t what = events[i].events;
      close_reason why = close_reason::none;
      // A QuickFIX exception that escapes a session must end only its
      // connection, never the acceptor (issue 28).
      try {
        if (what & EPOLLERR)
          why = close_reason::peer;
        if (why == close_reason::none && (what & EPOLLOUT))
          why = conn.on_writable();
        // EPOLLHUP: what the client sent before it hung up is read first.
        if (why == close_reason::none && (what & (EPOLLIN | EPOLLHUP)))
          why = conn.on_readable();
      } catch (const std::exception&) {
        why = close_reason::session;
      }
      if (why != close_reason::none)
        end(fd, why);
    }
    if (woken) { // someone asked for a disconnect, or for the stop
      uint64_t count = 0;
      (void)!::read(wake_fd_, &count, sizeof count);
      tick(false);
    }
    for (int fd : accepting)
      accept_all(fd);
    if (clock::now() >= next_tick) {
      next_tick += std::chrono::milliseconds(tick_ms);
      if (next_tick < clock::now())
        next_tick = clock::now() + std::chrono::milliseconds(tick_ms);
      bool session_timer = ++ticks % ticks_per_session_timer == 0;
      tick(session_timer);
    }
  }
  while (!connections_.empty())
    end(connections_.begin()->first, close_reason::none);
}

void fix_acceptor::tick(bool session_timer) {
  const auto now = clock::now();
  if (listeners_paused_) {
    listeners_paused_ = false;
    for (const auto& l : listeners_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = l.first;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, l.first, &ev);
    }
  }
  std::vector<std::pair<int, close_reason>> ended;
  for (auto& c : connections_) {
    close_reason why = close_reason::none;
    try {
      why = c.second->on_tick(now, session_timer);
    } catch (const std::exception&) {
      why = close_reason::session;
    }
    if (why != close_reason::none)
      ended.emplace_back(c.first, why);
  }
  for (const auto& e : ended)
    end(e.first, e.second);
}

void fix_acceptor::accept_all(int listener) {
  const int port = listeners_[listener];
  const FIX::Dictionary& d = settings_.get(*port_sessions_[port].begin());
  const bool nodelay = setting(d, FIX::SOCKET_NODELAY, false);
  const int sndbuf = d.has(FIX::SOCKET_SEND_BUFFER_SIZE) ? d.getInt(FIX::SOCKET_SEND_BUFFER_SIZE) : 0;
  const int rcvbuf = d.has(FIX::SOCKET_RECEIVE_BUFFER_SIZE) ? d.getInt(FIX::SOCKET_RECEIVE_BUFFER_SIZE) : 0;
  for (;;) {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the listener would stay readable and spin
        // this thread; it rests until the next tick, when connections
        // past their logon deadline may have freed some.
        epoll_event ev{};
        ev.data.fd = listener;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener, &ev);
        listeners_paused_ = true;
      }
      return; // EAGAIN: all taken
    }
    int one = 1;
    if (nodelay)
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sndbuf > 0)
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (rcvbuf > 0)
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    std::unique_ptr<fix_connection> c(new fix_connection(
      fd, port_sessions_[port], limits_, epoll_fd_, wake_fd_, clock::now()));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    connections_[fd] = std::move(c);
    ++connections_total_;
  }
}

void fix_acceptor::end(int fd, close_reason why) {
  auto c = connections_.find(fd);
  if (c == connections_.end())
    return;
  switch (why) {
    case close_reason::oversized: ++oversized_cut_; break;
    case close_reason::pre_logon: ++pre_logon_cut_; break;
    case close_reason::logon_timeout: ++logon_timeout_cut_; break;
    default: break;
  }
  if (c->second->cut_unread())
    ++unread_cut_;
  discarded_ += c->second->discarded();
  try {
    c->second->close();
  } catch (const std::exception&) {
    // QuickFIX's onLogout or unregister threw: the socket is closed anyway.
  }
  connections_.erase(c);
}

bool fix_acceptor::any_logged_on() const {
  for (const auto& s : sessions_)
    if (s.second->isLoggedOn())
      return true;
  return false;
}

void fix_acceptor::stop() {
  if (!thread_.joinable())
    return;
  std::vector<FIX::Session*> enabled;
  for (auto& s : sessions_)
    if (s.second->isEnabled()) {
      s.second->logout();
      enabled.push_back(s.second);
    }
  // QuickFIX waits in whole seconds; a shorter step stops sooner.
  for (int i = 0; i < 1000 && any_logged_on(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop_.store(true, std::memory_order_release);
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  thread_.join();
  for (auto& l : listeners_)
    ::close(l.first);
  listeners_.clear();
  ::close(epoll_fd_);
  ::close(wake_fd_);
  for (FIX::Session* s : enabled)
    s->logon();
}

void fix_acceptor::add_stats(gateway_stats& st) const {
  st.connections = connections_total_.load();
  st.oversized_cut = oversized_cut_.load();
  st.pre_logon_cut = pre_logon_cut_.load();
  st.logon_timeout_cut = logon_timeout_cut_.load();
  st.discarded_bytes = discarded_.load();
  st.unread_cut = unread_cut_.load();
}

} // namespace fix
} // namespace exchange
