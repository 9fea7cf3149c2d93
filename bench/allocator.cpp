// SPDX-License-Identifier: Apache-2.0
#include "allocator.hpp"

#include <cstdlib>
#include <cstring>

#ifdef KEYLANE_BENCH_MIMALLOC
#  include <mimalloc.h>
#endif

namespace keylane::bench {

std::string allocator_name() {
#ifdef KEYLANE_BENCH_MIMALLOC
  return "mimalloc";
#else
  return "system";
#endif
}

std::string allocator_note() {
#ifdef KEYLANE_BENCH_MIMALLOC
  // Linking the shared library replaces malloc only if the dynamic linker
  // binds malloc to it: check with a real malloc'd block.
  void* p = std::malloc(64);
  if (p)
    std::memset(p, 0, 64);
  bool ours = mi_is_in_heap_region(p);
  std::free(p);
  int v = mi_version();
  auto version = std::to_string(v / 100) + "." + std::to_string(v / 10 % 10)
                 + "." + std::to_string(v % 10);
  return ours ? "mimalloc " + version + " (malloc checked to be mimalloc's) "
                  "for every way; keylane rows also with the system allocator "
                  "(keylane_bench_sysalloc, a child process)"
              : "mimalloc " + version + " linked, BUT malloc is not mimalloc's";
#else
  return "system (glibc) malloc";
#endif
}

} // namespace keylane::bench
