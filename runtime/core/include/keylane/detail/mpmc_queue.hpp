// SPDX-License-Identifier: Apache-2.0
#pragma once

// The one place that names moodycamel's queue: its include path differs by
// how it was installed (Debian puts it under concurrentqueue/).
#if __has_include(<concurrentqueue/blockingconcurrentqueue.h>)
#  include <concurrentqueue/blockingconcurrentqueue.h>
#  include <concurrentqueue/concurrentqueue.h>
#else
#  include <blockingconcurrentqueue.h>
#  include <concurrentqueue.h>
#endif

namespace keylane::detail {

/// Lock-free multi-producer multi-consumer queue. FIFO per producer only:
/// items of different producers interleave in no defined order.
template <class T>
using mpmc_queue = moodycamel::ConcurrentQueue<T>;

/// moodycamel's defaults, but a waiting consumer spins 256 times, not
/// 10,000, before it sleeps: on a machine with as many cores as keylane
/// has workers, a consumer spinning for tens of microseconds takes that
/// time from the workers that would fill its queue.
struct short_spin_traits : moodycamel::ConcurrentQueueDefaultTraits {
  static const int MAX_SEMA_SPINS = 256;
};

/// `mpmc_queue` with blocking waits for consumers.
template <class T>
using blocking_mpmc_queue = moodycamel::BlockingConcurrentQueue<T>;

/// `blocking_mpmc_queue` whose waiting consumer spins briefly: the output
/// queue, whose consumer shares the cores with keylane's workers.
template <class T>
using short_spin_queue = moodycamel::BlockingConcurrentQueue<T, short_spin_traits>;

/// Per-producer token that makes enqueues cheaper.
using producer_token = moodycamel::ProducerToken;

} // namespace keylane::detail
