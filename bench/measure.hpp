// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the driver reads from the OS: CPU time, memory, the machine and
// how busy the rest of it is.

#include <cstdint>
#include <string>

namespace keylane::bench {

/// User + system CPU seconds of this process (all threads) so far.
[[nodiscard]] double process_cpu_seconds();

/// Context switches of this process (all threads) so far: voluntary (a
/// thread went to sleep, so something must wake it) plus involuntary.
[[nodiscard]] uint64_t process_context_switches();

/// Resident set size now (VmRSS), in MiB; 0 if unreadable.
[[nodiscard]] double rss_mb();

/// Peak resident set size (VmHWM), in MiB; 0 if unreadable.
[[nodiscard]] double peak_rss_mb();

/// Threads of this process now (/proc/self/status); 0 if unreadable.
[[nodiscard]] int process_threads();

/// Resets VmHWM to the current RSS (Linux: "5" > /proc/self/clear_refs).
/// Returns false if the kernel refused.
bool reset_peak_rss();

/// Checks once that `reset_peak_rss` really lowers VmHWM: maps and touches
/// 64 MiB, unmaps it, resets, and compares. The result is cached.
[[nodiscard]] bool peak_reset_works();

/// Whole-machine CPU counters from /proc/stat, in seconds.
struct cpu_sample {
  double busy = 0;  // user + nice + system + irq + softirq
  double steal = 0; // taken by the hypervisor for other guests
  double total = 0; // everything, idle included
};

/// Reads /proc/stat now.
[[nodiscard]] cpu_sample sample_cpu();

/// The share of the machine's CPU (0..1 of all cores) that was busy
/// between `a` and `b` but not spent by this process (`own_cpu_s`), plus
/// steal: the load of everything else.
[[nodiscard]] double other_load(const cpu_sample& a, const cpu_sample& b,
                                double own_cpu_s);

/// The machine in one line: CPU model, cores, MHz, kernel.
[[nodiscard]] std::string machine_description();

/// Cores online.
[[nodiscard]] unsigned cores();

/// The 1-minute load average now.
[[nodiscard]] double load_average();

} // namespace keylane::bench
