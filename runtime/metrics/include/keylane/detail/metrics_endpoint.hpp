// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/detail/metrics_source.hpp"

// prometheus-cpp is a private dependency: this header names its types only.
namespace prometheus {
class Exposer;
} // namespace prometheus

namespace keylane::detail {

/// The Prometheus text endpoint of `metrics.listen`: an HTTP server
/// (civetweb, through prometheus-cpp) that answers `GET /metrics` with the
/// `keylane_*` families built from `metrics_source` at that moment.
///
/// Connections that never finish a request (idle, or with half a request)
/// do not hold up scrapes while they leave some of the `threads` free (64
/// leave 16 of the default 80), and each is dropped when it has not sent a
/// whole request header within 2 s.
///
/// Thread-safety: scrapes run on the server's own threads, several at
/// once, and call the source functions concurrently with each other and
/// with the rest of the program; those functions must be thread-safe. The
/// destructor stops the server and returns only after the last scrape has
/// ended, so the source is never called after it.
class metrics_endpoint {
public:
  /// Listens on `listen` ("host:port"; the host a name or IPv4 address,
  /// resolved once here) with `threads` request threads
  /// (`metrics.threads`). Fails with `errc::invalid_config` for `threads`
  /// outside 1 to 1024, and with `errc::startup_failed` and a message
  /// naming the address when it cannot listen: an unknown host, an address
  /// not of this machine, a port in use.
  [[nodiscard]] static caf::expected<std::unique_ptr<metrics_endpoint>>
  open(const std::string& listen, size_t threads, metrics_source source);

  ~metrics_endpoint();
  metrics_endpoint(const metrics_endpoint&) = delete;
  metrics_endpoint& operator=(const metrics_endpoint&) = delete;

  /// The port listened on (the chosen one when `listen` asked for port 0).
  [[nodiscard]] uint16_t port() const noexcept { return port_; }

private:
  class collector;
  metrics_endpoint() = default;

  std::shared_ptr<collector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint16_t port_ = 0;
  int listener_ = -1; // civetweb's listening socket, shut down to stop it
};

} // namespace keylane::detail
