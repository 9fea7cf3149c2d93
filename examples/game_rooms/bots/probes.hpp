// SPDX-License-Identifier: Apache-2.0
#pragma once

// Single clients that check one promise of the server each (`game_probe`):
// what a client that never reads costs the server, how a text frame that
// is not UTF-8 ends, and what a stream of fresh names costs a room.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace bots {

/// What the client that stopped reading saw.
struct stalled_report {
  /// Chat bytes it asked the server to send back to it.
  size_t flooded = 0;
  /// The connection ended (reset or closed) while it still did not read.
  bool closed = false;
  /// Time from the first chat line to the end (or to the watchdog).
  std::chrono::milliseconds after{0};
};

/// Joins `room` alone, then never reads: asks for `flood` bytes of chat to
/// come back, one line a millisecond, and waits up to `watchdog` from the
/// first line for the server to end the connection. Blocking.
[[nodiscard]] stalled_report run_never_reads(boost::asio::ip::tcp::endpoint to,
                                             const std::string& room,
                                             size_t flood,
                                             std::chrono::seconds watchdog);

/// How the server answered a text frame that is not valid UTF-8.
struct utf8_report {
  /// The server closed the WebSocket with this code (0: it did not close).
  int close_code = 0;
  /// The first message it sent instead, if any.
  std::string answer;
};

/// Joins `room` and sends a `chat` whose text is not valid UTF-8. Blocking.
[[nodiscard]] utf8_report run_invalid_utf8(boost::asio::ip::tcp::endpoint to,
                                           const std::string& room);

/// What joining and leaving with fresh names cost, per block of names.
struct fresh_names_report {
  /// Names that joined (each welcomed) and left.
  size_t names = 0;
  /// Joins and leaves per second, for each block of `block` names.
  std::vector<double> per_second;
};

/// Joins `room` and leaves it again with `names` fresh names, one after
/// another on one connection, as fast as the server welcomes them; stops
/// at the first join that gets no welcome. Blocking.
[[nodiscard]] fresh_names_report run_fresh_names(
  boost::asio::ip::tcp::endpoint to, const std::string& room, size_t names,
  size_t block);

} // namespace bots
