// SPDX-License-Identifier: Apache-2.0
#pragma once

// Starts the server as a child process for one run of the bots (what the
// CTest runs do), learns its port from its first line, and on `stop` sends
// SIGTERM and keeps its closing "stats {...}" line.

#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace bots {

/// A server child process.
///
/// Thread-safety: one owner thread.
class server_process {
public:
  server_process() = default;
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;
  ~server_process() { stop(); }

  /// Runs `argv` and waits for its "listening <port>" line; false (and a
  /// message on stderr) if it exits or prints something else first.
  [[nodiscard]] bool start(const std::vector<std::string>& argv);

  /// The port the server listens on.
  [[nodiscard]] unsigned short port() const noexcept { return port_; }

  /// Stops the server; its exit status (-1 if it died by a signal).
  int stop();

  /// The JSON object of the server's "stats" line ("null" if none).
  [[nodiscard]] const std::string& stats() const noexcept { return stats_; }

private:
  pid_t pid_ = -1;
  int fd_ = -1;
  unsigned short port_ = 0;
  int status_ = -1;
  std::thread reader_;
  std::string stats_ = "null";
};

} // namespace bots
