// SPDX-License-Identifier: Apache-2.0
#include "limit_checks.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace exchange {
namespace load {

namespace {

using clock = std::chrono::steady_clock;

double since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

int connect_to(const load_options& o) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  if (fd < 0 || ::inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1
      || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "order_entry_load: cannot connect to %s:%d: %s\n",
                 o.host.c_str(), o.port, std::strerror(errno));
    if (fd >= 0)
      ::close(fd);
    return -1;
  }
  return fd;
}

// True once the server closed `fd` (EOF or a reset), waiting until `until`.
bool closed_by_server(int fd, clock::time_point until) {
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return true;
  }
}

// What the server may take in before it drops a flood: its own bounded
// buffer plus what the two kernels' socket buffers hold on loopback (a
// few MiB with autotuning). QuickFIX's SocketAcceptor read all of it, and
// kept it, before it closed the connection.
constexpr size_t flood_bound = 16u << 20;

// Sends `prefix` then `total` bytes of `fill`; PASS if the server drops
// the connection before `flood_bound` bytes were written.
bool flood(const load_options& o, const char* name, const std::string& prefix,
           char fill, size_t total) {
  int fd = connect_to(o);
  if (fd < 0)
    return false;
  // A server that stops reading without closing must not hang the check.
  timeval tv{static_cast<time_t>(o.limits_wait_s), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const auto t0 = clock::now();
  std::string chunk(64 * 1024, fill);
  size_t sent = 0;
  bool dropped = false;
  std::string what = prefix;
  while (sent < prefix.size() + total) {
    if (what.empty())
      what.assign(chunk, 0, std::min(chunk.size(), prefix.size() + total - sent));
    ssize_t n = ::send(fd, what.data(), what.size(), MSG_NOSIGNAL);
    if (n < 0) {
      dropped = errno == EPIPE || errno == ECONNRESET;
      break;
    }
    sent += static_cast<size_t>(n);
    what.erase(0, static_cast<size_t>(n));
  }
  if (!dropped)
    dropped = closed_by_server(fd, clock::now() + std::chrono::milliseconds(
                                                   static_cast<int64_t>(o.limits_wait_s * 1000)));
  ::close(fd);
  const bool ok = dropped && sent < flood_bound;
  std::printf("%s  %s: %zu of %zu bytes written (at most %zu may be); %s "
              "after %.2f s\n",
              ok ? "PASS" : "FAIL", name, sent, prefix.size() + total,
              flood_bound,
              dropped ? "the server dropped the connection"
                      : "the connection is still open",
              since(t0));
  return ok;
}

// `n` connections that never complete a Logon, half of them silent, half
// with the start of one: PASS if the server drops every one in time.
bool no_logon(const load_options& o, int n) {
  const std::string partial = "8=FIX.4.4\0019=70\00135=A\00134=1\00149=LOAD1\001";
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    int fd = connect_to(o);
    if (fd < 0)
      break;
    if (i % 2 == 1)
      (void)!::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  const auto t0 = clock::now();
  const auto until = t0 + std::chrono::milliseconds(static_cast<int64_t>(o.limits_wait_s * 1000));
  int open = 0;
  double last = 0;
  for (int fd : fds) {
    if (closed_by_server(fd, until))
      last = since(t0);
    else
      ++open;
    ::close(fd);
  }
  const bool ok = static_cast<int>(fds.size()) == n && open == 0;
  std::printf("%s  %d connections without a Logon (half silent, half with a "
              "partial one): %d still open after %.1f s; the last dropped "
              "after %.2f s\n",
              ok ? "PASS" : "FAIL", n, open + (n - static_cast<int>(fds.size())),
              o.limits_wait_s, last);
  return ok;
}

} // namespace

bool check_limits(const load_options& o) {
  bool ok = true;
  ok &= flood(o, "BodyLength=999999999 then 64 MiB before logon",
              "8=FIX.4.4\0019=999999999\001", '0', 64u << 20);
  ok &= flood(o, "32 MiB with no 8= before logon", "", 'x', 32u << 20);
  ok &= no_logon(o, 200);
  std::printf(ok ? "all limit checks PASS\n" : "limit checks FAILED\n");
  return ok;
}

} // namespace load
} // namespace exchange
