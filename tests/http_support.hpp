// SPDX-License-Identifier: Apache-2.0
#pragma once

// A tiny HTTP/1.0 GET client on POSIX sockets for scraping the metrics
// endpoint over real loopback, a free-port finder, and a count of this
// process's listening TCP sockets (Linux /proc). No dependency beyond libc.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace http_support {

/// What a GET got: a status and body, or `error` (status 0).
struct response {
  int status = 0;
  std::string body;
  std::string error;
};

namespace detail {

inline sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Closes the socket on every path out.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace detail

/// GETs `path` from 127.0.0.1:`port`; gives up after `patience_s` seconds
/// without data (10 unless told), so a hung server fails the test instead
/// of hanging it.
inline response get(uint16_t port, const std::string& path = "/metrics",
                    long patience_s = 10) {
  response r;
  detail::fd_guard s{::socket(AF_INET, SOCK_STREAM, 0)};
  if (s.fd < 0)
    return r.error = std::strerror(errno), r;
  timeval limit{patience_s, 0};
  ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  auto addr = detail::loopback(port);
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return r.error = std::string{"connect: "} + std::strerror(errno), r;
  auto req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(s.fd, req.data(), req.size(), MSG_NOSIGNAL)
      != static_cast<ssize_t>(req.size()))
    return r.error = std::string{"send: "} + std::strerror(errno), r;
  std::string all;
  char buf[4096];
  for (;;) {
    auto n = ::recv(s.fd, buf, sizeof(buf), 0);
    if (n == 0)
      break; // HTTP/1.0: the server closes after the body
    if (n < 0)
      return r.error = std::string{"recv: "} + std::strerror(errno), r;
    all.append(buf, static_cast<size_t>(n));
  }
  auto head_end = all.find("\r\n\r\n");
  if (all.compare(0, 5, "HTTP/") != 0 || head_end == std::string::npos)
    return r.error = "not an HTTP response: " + all.substr(0, 80), r;
  r.status = std::stoi(all.substr(all.find(' ') + 1, 3));
  r.body = all.substr(head_end + 4);
  return r;
}

/// A TCP connection to 127.0.0.1:`port` that has sent `text` and then
/// waits (a scraper that hangs mid-request); closed when it goes.
struct stalled_client {
  detail::fd_guard s{::socket(AF_INET, SOCK_STREAM, 0)};
  bool connected = false;

  stalled_client(uint16_t port, const std::string& text) {
    auto addr = detail::loopback(port);
    connected = s.fd >= 0
                && ::connect(s.fd, reinterpret_cast<sockaddr*>(&addr),
                             sizeof(addr))
                     == 0
                && ::send(s.fd, text.data(), text.size(), MSG_NOSIGNAL)
                     == static_cast<ssize_t>(text.size());
  }

  /// Whether the server has closed this connection (or answered on it):
  /// the socket is readable, waiting at most `wait_ms` for that.
  bool dropped(int wait_ms = 0) const {
    pollfd p{s.fd, POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, wait_ms) > 0;
  }
};

/// A port nothing listens on right now (bound to port 0, learned, closed).
/// Another process may take it before we do: callers retry on "in use".
inline uint16_t free_port() {
  detail::fd_guard s{::socket(AF_INET, SOCK_STREAM, 0)};
  auto addr = detail::loopback(0);
  socklen_t len = sizeof(addr);
  if (s.fd < 0
      || ::bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  return ntohs(addr.sin_port);
}

/// How many TCP sockets this process has listening (Linux only): the
/// socket inodes among its open files that /proc/net/tcp{,6} lists in
/// state LISTEN (0A).
inline size_t listening_sockets() {
  std::set<std::string> listening;
  for (auto table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      std::string sl, local, remote, st, queues, timer, retr, uid, timeout,
        inode;
      fields >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid
        >> timeout >> inode;
      if (st == "0A")
        listening.insert(inode);
    }
  }
  size_t n = 0;
  if (auto* dir = ::opendir("/proc/self/fd")) {
    while (auto* e = ::readdir(dir)) {
      char target[64] = {};
      auto path = std::string{"/proc/self/fd/"} + e->d_name;
      auto len = ::readlink(path.c_str(), target, sizeof(target) - 1);
      std::string t{target, len > 0 ? static_cast<size_t>(len) : 0};
      if (t.compare(0, 8, "socket:[") == 0
          && listening.count(t.substr(8, t.size() - 9)) > 0)
        ++n;
    }
    ::closedir(dir);
  }
  return n;
}

} // namespace http_support
