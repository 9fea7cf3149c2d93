// SPDX-License-Identifier: Apache-2.0
#pragma once

// A connected player as the rooms see it: something to send text to.

#include <memory>
#include <string>

namespace game {

/// One connection's outbound side.
///
/// Thread-safety: `send` may be called from any thread.
class client {
public:
  virtual ~client() = default;

  /// Queues `msg` for the connection; a connection whose queue is full is
  /// closed instead (a client that does not read costs a bounded queue).
  virtual void send(std::shared_ptr<const std::string> msg) = 0;
};

} // namespace game
