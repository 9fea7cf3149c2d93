// SPDX-License-Identifier: Apache-2.0
#pragma once

// The kill -9 drill: transfers between accounts kept in RocksDB, a child
// process killed at random moments and started again on the same
// directory, then every account checked against what its inputs say.

#include <cstdint>
#include <string>

namespace transfers {

/// What a drill sends: each account gets its opening credit and then
/// `debits` transfers to random accounts, all numbered as its inputs.
struct drill_plan {
  size_t accounts = 200;
  size_t debits = 200;
  long opening = 1000000; // never short: every debit is applied
  uint64_t seed = 1;
  std::string dir;
  bool exactly_once = true;
  size_t checkpoint_ms = 20;
};

/// One run: sends every input (those applied before are dropped by the
/// accounts' state), waits for all of it, stops. The exit status.
int drill_run(const drill_plan& p);

/// Compares each account's stored state with its inputs; prints what
/// differs. 0 if all hold, 1 if not, 2 if the store cannot be read.
int drill_check(const drill_plan& p);

/// Starts `self` (this program) as `drill_run` children on `p.dir`, kills
/// `kills` of them with SIGKILL at random moments, lets the last finish,
/// and checks. With `control`, the drill must find a difference (it runs
/// with `messaging.exactly_once` off): 0 if it did.
int drill(const drill_plan& p, size_t kills, bool control, const char* self);

} // namespace transfers
