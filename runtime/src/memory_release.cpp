#include "keylane/detail/memory_release.hpp"

#include <malloc.h>

// Resolved only when the process links mimalloc; keylane itself does not.
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace keylane::detail {

void release_free_memory() noexcept {
  if (mi_collect != nullptr)
    mi_collect(true);
  else
    malloc_trim(0);
}

} // namespace keylane::detail
