// SPDX-License-Identifier: Apache-2.0
#pragma once

// The simulated database of the keylane way: an actor that answers each
// request after the event's round-trip latency, without blocking a thread.

#include <cstdint>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>

namespace ledger {

/// Request to the database: `(apply_atom, int64_t latency_us)`; the reply,
/// `int64_t latency_us`, arrives after that many microseconds.
using apply_atom = caf::atom_constant<caf::atom("apply")>;

/// Spawns the database actor in `sys`. It serves any number of requests
/// at once (each reply waits on a timer, not on the actor), and stops on an
/// exit message (`caf::anon_send_exit(db, caf::exit_reason::user_shutdown)`),
/// dropping the replies still pending.
[[nodiscard]] caf::actor spawn_database(caf::actor_system& sys);

} // namespace ledger
