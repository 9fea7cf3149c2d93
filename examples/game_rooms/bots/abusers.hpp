// SPDX-License-Identifier: Apache-2.0
#pragma once

// Clients that misbehave, run beside the bots (`game_bots --abuse`):
// malformed frames and unknown rooms, one oversized frame, and one client
// that stops reading its socket. Each reports what the server did.

#include <atomic>
#include <cstdint>
#include <string>

#include <boost/asio/ip/tcp.hpp>

namespace bots {

/// What the misbehaving clients saw.
struct abuse_report {
  /// Bad frames sent, and "err" answers got for them.
  int bad_sent = 0;
  int bad_answered = 0;
  /// The garbage client could still join and got a snapshot afterwards.
  bool usable_after = false;
  /// The server closed the connection after the oversized frame.
  bool oversized_closed = false;
  /// The client that stopped reading found its connection closed later.
  bool stalled_dropped = false;
};

/// Sends malformed frames, then joins `room` properly. Blocking.
void run_garbage(boost::asio::ip::tcp::endpoint to, const std::string& room,
                 abuse_report& out);

/// Joins `room` and sends a frame far above the server's limit. Blocking.
void run_oversized(boost::asio::ip::tcp::endpoint to, const std::string& room,
                   abuse_report& out);

/// Joins `room`, asks for a flood of chat, stops reading until `done`,
/// then checks whether the server dropped it. Blocking.
void run_stalled(boost::asio::ip::tcp::endpoint to, const std::string& room,
                 const std::atomic<bool>& done, abuse_report& out);

} // namespace bots
