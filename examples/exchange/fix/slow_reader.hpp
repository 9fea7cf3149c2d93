// SPDX-License-Identifier: Apache-2.0
#pragma once

// A FIX client that never reads: one raw TCP connection that logs on and
// sends order requests as fast as its socket takes them, for checking that
// a client who stops reading costs the others nothing. C++14.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace exchange {
namespace load {

class slow_reader {
public:
  ~slow_reader() { close(); }

  /// Connects to `host`:`port`, logs on as `comp_id` and starts sending
  /// `requests` cancels of orders that do not exist (each one answered
  /// with an OrderCancelReject the server cannot deliver). False with
  /// `error` if it cannot connect.
  bool start(const std::string& host, int port, const std::string& comp_id,
             uint64_t requests, std::string& error);

  /// Requests written into the socket so far.
  uint64_t sent() const noexcept { return sent_.load(); }

  /// Stops sending and closes the connection, unread.
  void close();

private:
  void run(uint64_t requests);

  int fd_ = -1;
  std::string comp_id_;
  std::atomic<uint64_t> sent_{0};
  std::atomic<bool> stop_{false};
  std::thread sender_;
};

/// `body` (tags after 9=, each ending in SOH) framed as a FIX 4.4 message.
std::string frame_fix(const std::string& body);

} // namespace load
} // namespace exchange
