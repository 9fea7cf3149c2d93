// SPDX-License-Identifier: Apache-2.0
#pragma once

// Prometheus' own check of an exposition (`promtool check metrics`): the
// format, and its lint rules (counters end in _total, every family has a
// HELP, no duplicate family). KEYLANE_PROMTOOL is set by tests/CMakeLists.txt.

#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace promtool {

/// What promtool said, and whether it accepted the text.
struct verdict {
  bool ok = false;
  std::string output;
};

/// Runs `promtool check metrics` on `text`.
inline verdict check(const std::string& text) {
  char path[] = "/tmp/keylane-promtool-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0)
    return {false, "mkstemp failed"};
  auto written = ::write(fd, text.data(), text.size());
  ::close(fd);
  verdict v;
  if (written != static_cast<ssize_t>(text.size())) {
    ::unlink(path);
    return {false, "short write"};
  }
  auto cmd = std::string{KEYLANE_PROMTOOL} + " check metrics < " + path
             + " 2>&1";
  if (auto* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (auto n = std::fread(buf, 1, sizeof buf, p))
      v.output.append(buf, n);
    auto status = ::pclose(p);
    v.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  } else {
    v.output = "cannot run " + cmd;
  }
  ::unlink(path);
  return v;
}

} // namespace promtool
