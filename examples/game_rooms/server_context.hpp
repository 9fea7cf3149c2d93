// SPDX-License-Identifier: Apache-2.0
#pragma once

// What every connection of the server shares.

#include <cstddef>

#include "server_stats.hpp"
#include "world.hpp"

namespace game {

/// The limits and shared parts a connection works with.
struct server_context {
  world& rooms;
  server_stats& stats;
  /// Largest frame a client may send; a bigger one closes the connection.
  size_t max_message = 1024;
  /// Bytes queued for one client before it counts as not reading and is
  /// dropped.
  size_t outbound_limit = 256 * 1024;
  /// SO_SNDBUF of accepted sockets (0: the system's), so a stalled client
  /// fills its queue in bounded time.
  int sndbuf = 0;
};

} // namespace game
