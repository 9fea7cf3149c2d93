// SPDX-License-Identifier: Apache-2.0
#include "keylane/usable_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace keylane {

namespace detail {

size_t cpus_of_cpu_max(const std::string& line) noexcept {
  std::istringstream in{line};
  std::string quota;
  unsigned long long period = 0;
  if (!(in >> quota >> period) || period == 0 || quota == "max")
    return 0;
  unsigned long long q = 0;
  for (char c : quota) {
    if (c < '0' || c > '9')
      return 0;
    q = q * 10 + static_cast<unsigned long long>(c - '0');
    if (q > (1ull << 40))
      return 0; // no quota of this size is meant as a bound
  }
  return q == 0 ? 0 : static_cast<size_t>((q + period - 1) / period);
}

} // namespace detail

namespace {

size_t affinity_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    auto n = CPU_COUNT(&set);
    if (n > 0)
      return static_cast<size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// The tightest `cpu.max` on the way from this process's cgroup to the
// root: a quota on a parent bounds every child.
size_t quota_cpus() noexcept {
  try {
    std::ifstream groups{"/proc/self/cgroup"};
    std::string line, path;
    while (std::getline(groups, line))
      if (line.rfind("0::", 0) == 0)
        path = line.substr(3);
    if (path.empty() || path[0] != '/')
      return 0;
    size_t best = 0;
    for (;;) {
      std::ifstream max{"/sys/fs/cgroup" + (path == "/" ? "" : path)
                        + "/cpu.max"};
      std::string text;
      if (max && std::getline(max, text)) {
        auto n = detail::cpus_of_cpu_max(text);
        if (n != 0 && (best == 0 || n < best))
          best = n;
      }
      if (path == "/")
        return best;
      auto cut = path.find_last_of('/');
      path = cut == 0 ? "/" : path.substr(0, cut);
    }
  } catch (...) {
    return 0; // unreadable: no quota known, the affinity mask decides
  }
}

} // namespace

size_t usable_cpus() noexcept {
  auto n = affinity_cpus();
  auto quota = quota_cpus();
  if (quota != 0)
    n = std::min(n, quota);
  return std::max<size_t>(1, n);
}

} // namespace keylane
