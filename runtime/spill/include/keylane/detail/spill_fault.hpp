// SPDX-License-Identifier: Apache-2.0
#pragma once
// The spill file's write-failure hook, for the disk-fault tests: while it
// holds an errno, every append writes half of its record and then fails
// with that errno, as a disk that fills up mid-write does. 0 (the default):
// appends write.

#include <atomic>

namespace keylane::detail {

/// The errno spill appends fail with (ENOSPC, EIO), or 0.
extern std::atomic<int> spill_write_fault;

} // namespace keylane::detail
