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

/// `mpmc_queue` with blocking waits for consumers.
template <class T>
using blocking_mpmc_queue = moodycamel::BlockingConcurrentQueue<T>;

/// Per-producer token that makes enqueues cheaper.
using producer_token = moodycamel::ProducerToken;

} // namespace keylane::detail
