// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

namespace keylane {

/// CPUs this process may use, at least 1: those in the calling thread's
/// affinity mask (`taskset`, a container's cpuset), further bounded by a
/// cgroup v2 CPU quota (`cpu.max`, as `docker --cpus` sets it) rounded up.
/// What `scheduler.threads = 0` takes; a server that keeps busy threads of
/// its own sizes keylane's from it, leaving them their cores.
[[nodiscard]] size_t usable_cpus() noexcept;

namespace detail {

/// The CPUs one cgroup v2 `cpu.max` line allows, rounded up ("250000
/// 100000": 3); 0 for "max" (no quota) or a line it cannot read.
[[nodiscard]] size_t cpus_of_cpu_max(const std::string& line) noexcept;

} // namespace detail

} // namespace keylane
