// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>

namespace keylane::detail {

/// How long an actor of keylane stays idle (no lanes, no keys) before it
/// gives memory back: long enough that a workload with short pauses never
/// pays for it, short enough that an idle runtime returns its memory soon.
inline constexpr auto release_after = std::chrono::milliseconds(50);

/// Asks the allocator to return freed memory to the OS: mimalloc's
/// `mi_collect(true)` (for the calling thread's heap) when the process runs
/// on mimalloc, glibc's `malloc_trim(0)` otherwise. Without it an idle
/// runtime keeps its peak: both allocators give pages back only from
/// later allocator calls, which an idle thread does not make. Costs up to
/// a few milliseconds; keylane calls it only after `release_after` idle.
void release_free_memory() noexcept;

/// Replaces `t` with an empty table if it is empty and holds more than
/// `keep` buckets: open-addressing tables keep their buckets after erase.
template <class Table>
void shrink_if_empty(Table& t, size_t keep = 1024) {
  if (t.empty() && t.bucket_count() > keep)
    Table{}.swap(t);
}

} // namespace keylane::detail
