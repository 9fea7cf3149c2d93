// SPDX-License-Identifier: Apache-2.0
#pragma once

// One bot: a WebSocket client that joins a room, sends random inputs (or
// walks to the portal), and checks every snapshot it gets.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "bot_stats.hpp"

namespace bots {

/// How one bot behaves.
struct bot_plan {
  std::string room;
  std::string name;
  /// Heads for the portal instead of wandering.
  bool walker = false;
  /// Time between inputs.
  std::chrono::milliseconds every{100};
  uint64_t seed = 1;
};

/// A bot.
///
/// Thread-safety: runs on one io_context thread, with `stats`.
class bot final : public std::enable_shared_from_this<bot> {
public:
  bot(boost::asio::io_context& ioc, bot_plan plan, bot_stats& stats);

  /// Connects to `to`, joins, and plays until `stop`.
  void start(boost::asio::ip::tcp::endpoint to);

  /// Stops sending inputs (snapshots are still read and checked).
  void quiet() noexcept { quiet_ = true; }

  /// Closes the connection; counts a transfer still under way as lost.
  void stop();

  /// True once the bot got its first welcome.
  [[nodiscard]] bool joined() const noexcept { return id_ != 0; }

private:
  using clock = std::chrono::steady_clock;
  void read();
  void on_message(const std::string& text);
  void on_snapshot(const std::string& text);
  void on_timer();
  void write(std::string text);
  void write_next();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::asio::steady_timer timer_;
  bot_plan plan_;
  bot_stats& stats_;
  std::mt19937_64 rng_;
  boost::beast::flat_buffer in_;
  std::deque<std::string> out_;
  bool writing_ = false;
  bool open_ = false;
  bool stopping_ = false;
  bool quiet_ = false;
  uint64_t id_ = 0;
  std::string room_;
  uint64_t last_tick_ = 0;
  clock::time_point last_snap_;
  uint64_t seq_ = 0;
  std::deque<std::pair<uint64_t, clock::time_point>> pending_;
  bool in_transit_ = false;
  int32_t x_ = -1, y_ = -1, last_x_ = -1, last_y_ = -1;
  int stuck_ = 0, wander_ = 0;
  int32_t dx_ = 0, dy_ = 0;
};

} // namespace bots
