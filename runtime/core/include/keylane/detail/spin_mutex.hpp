// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace keylane::detail {

/// A lock for critical sections of a few hundred nanoseconds that several
/// threads take on every key activation. A `std::mutex` that finds its
/// holder inside sleeps in the kernel and the holder must wake it (a futex
/// round trip, ~10 µs on the VMs we run on); this one spins a little, then
/// yields its core, so a holder that was preempted runs again. Not for
/// sections that block or may take long.
class spin_mutex {
public:
  void lock() noexcept {
    for (unsigned spins = 0;;) {
      if (!held_.exchange(true, std::memory_order_acquire))
        return;
      while (held_.load(std::memory_order_relaxed)) {
        if (++spins < spin_limit)
          relax();
        else
          std::this_thread::yield();
      }
    }
  }

  void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
  static constexpr unsigned spin_limit = 128;

  static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }

  std::atomic<bool> held_{false};
};

} // namespace keylane::detail
