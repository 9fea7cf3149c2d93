// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/memory_release.hpp"

#include <malloc.h>

// Resolved only when the process links mimalloc; keylane itself does not.
extern "C" void mi_collect(bool force) __attribute__((weak));

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KEYLANE_SANITIZER_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KEYLANE_SANITIZER_HEAP 1
#endif
#endif

namespace keylane::detail {

void release_free_memory() noexcept {
  if (mi_collect != nullptr) {
    mi_collect(true);
    return;
  }
#ifndef KEYLANE_SANITIZER_HEAP
  malloc_trim(0);
#endif
  // Under ASan or TSan the sanitizer's allocator owns the heap and does not
  // intercept malloc_trim: glibc's would walk arenas it never set up (a
  // SEGV in mtrim from a shard's idle trim, seen once in CI under ASan).
}

} // namespace keylane::detail
