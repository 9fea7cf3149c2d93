// SPDX-License-Identifier: Apache-2.0
#pragma once

// Counting this process's threads by name (Linux: /proc/self/task/*/comm),
// for tests of how many threads a setting starts.

#include <catch2/catch.hpp>

#include <dirent.h>

#include <fstream>
#include <string>

namespace thread_names {

/// Threads of this process named `name`.
inline int threads_named(const std::string& name) {
  int n = 0;
  auto* dir = ::opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.')
      continue;
    std::ifstream comm{std::string{"/proc/self/task/"} + entry->d_name
                       + "/comm"};
    std::string line;
    if (std::getline(comm, line) && line == name)
      ++n;
  }
  ::closedir(dir);
  return n;
}

/// CAF 0.17's worker threads (caf/scheduler/worker.hpp names them so).
inline int caf_workers() {
  return threads_named("caf.multiplexer");
}

} // namespace thread_names
