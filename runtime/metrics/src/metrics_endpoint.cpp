// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/metrics_endpoint.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <exception>
#include <utility>
#include <vector>

#include <CivetServer.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "keylane/errc.hpp"
#include "metrics_families.hpp"

namespace keylane::detail {

class metrics_endpoint::collector : public prometheus::Collectable {
public:
  explicit collector(metrics_source src) : src_(std::move(src)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    // Read here, at scrape time: the actors keep these counters anyway.
    return runtime_families(src_);
  }

private:
  metrics_source src_;
};

namespace {

// The config schema's bound for metrics.threads: civetweb starts them all
// up front, so more is memory and no help.
constexpr size_t max_threads = 1024;

// Civetweb reports why it cannot start only through its log callback, on
// the thread that starts it; the exception prometheus-cpp throws says only
// "possible problem binding to port". `open` points this at a string while
// it starts the server; other threads (requests) leave it null.
thread_local std::string* startup_messages = nullptr;

int capture_log(const mg_connection*, const char* message) {
  if (startup_messages == nullptr)
    return 0; // civetweb's default: its error log, which we do not set
  if (startup_messages->empty())
    *startup_messages = message; // the first one is the cause
  return 1;
}

caf::error cannot_listen(const std::string& listen, const std::string& why) {
  return make_error(errc::startup_failed, "metrics.listen = \"" + listen
                                            + "\": cannot listen: " + why);
}

// "host:port" as civetweb's numeric "a.b.c.d:port". Resolving here gives a
// clear message for an unknown host, and keeps civetweb's own port-list
// syntax ("8080,8443s", "+8080") out of what the config key accepts.
caf::expected<std::string> numeric_address(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return cannot_listen(listen, "expected \"host:port\"");
  auto host = listen.substr(0, colon);
  auto port = listen.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET; // Debian's civetweb is built without IPv6
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (auto rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
      rc != 0)
    return cannot_listen(listen, "cannot resolve \"" + host
                                   + "\" to an IPv4 address: "
                                   + gai_strerror(rc));
  char text[INET_ADDRSTRLEN] = {};
  auto* in = reinterpret_cast<sockaddr_in*>(found->ai_addr);
  inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
  freeaddrinfo(found);
  return std::string{text} + ":" + port;
}

// Civetweb gives each connection one of a fixed set of threads from accept
// until the response is sent, and a thread reading a request waits up to
// `request_timeout_ms` (30 s by default) for the whole header. With
// prometheus-cpp's two threads, two connections that never finish a
// request (a port scanner, a stuck proxy) held every scrape for 30 s.
// Measured on loopback with 64 such connections held (half idle, half with
// part of a request): 2 threads and a 100 ms timeout served the first
// scrape after 3.4 s, 8 threads and 100 ms after 0.85 s, 16 threads and
// 250 ms after 1.0 s; 80 threads with any timeout at once (4-9 ms), for
// 1.7 MB more resident memory than 2 threads (civetweb 1.15 starts all its
// threads up front). So by default (metrics.threads): enough threads that
// 64 held connections leave 16 for scrapes, and a 2 s request timeout,
// which bounds the wait beyond that (128 held: the scrape came after
// 2.0 s, within Prometheus' default 10 s scrape timeout) while still
// giving a slow client's request, one TCP segment, time for a
// retransmission. Keep-alive stays off (civetweb's
// default): a connection ends with its response and never idles on a thread.
std::vector<std::string> server_options(const std::string& address,
                                        size_t threads) {
  return {"listening_ports",    address, "num_threads", std::to_string(threads),
          "request_timeout_ms", "2000",  "enable_keep_alive", "no"};
}

// The listening socket on `port` among this process's open files (Linux:
// /proc/self/fd), or -1. Civetweb does not hand out its sockets.
int find_listener(uint16_t port) {
  int found = -1;
  auto* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr)
    return found;
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
      continue;
    auto fd = std::atoi(entry->d_name);
    int listening = 0;
    socklen_t len = sizeof(listening);
    sockaddr_in addr{};
    socklen_t addr_len = sizeof(addr);
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0
        && listening != 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len)
             == 0
        && addr.sin_family == AF_INET && ntohs(addr.sin_port) == port)
      found = fd;
  }
  ::closedir(dir);
  return found;
}

} // namespace

caf::expected<std::unique_ptr<metrics_endpoint>>
metrics_endpoint::open(const std::string& listen, size_t threads,
                       metrics_source source) {
  // The config file checks this range; settings filled in code land here.
  if (threads < 1 || threads > max_threads)
    return make_error(errc::invalid_config,
                      "metrics.threads = " + std::to_string(threads)
                        + ": must be between 1 and "
                        + std::to_string(max_threads));
  auto address = numeric_address(listen);
  if (!address)
    return std::move(address.error());
  std::unique_ptr<metrics_endpoint> ep{new metrics_endpoint};
  ep->collector_ = std::make_shared<collector>(std::move(source));
  CivetCallbacks callbacks;
  callbacks.log_message = capture_log;
  std::string messages;
  startup_messages = &messages;
  try {
    ep->exposer_ = std::make_unique<prometheus::Exposer>(
      server_options(*address, threads), &callbacks);
  } catch (const std::exception& e) {
    startup_messages = nullptr;
    return cannot_listen(listen, messages.empty() ? e.what() : messages);
  }
  startup_messages = nullptr;
  ep->exposer_->RegisterCollectable(ep->collector_);
  auto ports = ep->exposer_->GetListeningPorts();
  if (!ports.empty())
    ep->port_ = static_cast<uint16_t>(ports.front());
  ep->listener_ = find_listener(ep->port_);
  return ep;
}

metrics_endpoint::~metrics_endpoint() {
  // Civetweb's listening thread looks at its stop flag between polls of 2 s,
  // so a plain stop takes up to 2 s: shutting its socket down wakes the poll
  // at once (the thread sees the flag within microseconds; its failed
  // accepts meanwhile are harmless), and frees the port.
  if (listener_ >= 0)
    ::shutdown(listener_, SHUT_RDWR);
  // Stopping civetweb joins its threads: no scrape is running, or can
  // start, once this returns. Then the collector may go.
  exposer_.reset();
}

} // namespace keylane::detail
