// SPDX-License-Identifier: Apache-2.0
#pragma once

// One player's WebSocket connection: reads commands, hands them to the
// world, and writes what the rooms send through a bounded queue.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "client.hpp"
#include "server_context.hpp"

namespace game {

/// A WebSocket session.
///
/// Thread-safety: everything runs on the connection's strand; `send` may
/// be called from any thread and posts to it.
class ws_session final : public client,
                         public std::enable_shared_from_this<ws_session> {
public:
  ws_session(boost::asio::ip::tcp::socket s, server_context& ctx);

  /// Accepts the upgrade request `req` and starts reading.
  void run(boost::beast::http::request<boost::beast::http::string_body> req);

  void send(std::shared_ptr<const std::string> msg) override;

private:
  void read();
  void on_read(boost::beast::error_code ec);
  void handle(std::string_view frame);
  void reply(std::string text);
  void queue(std::shared_ptr<const std::string> msg);
  void write_next();
  void drop_slow();
  void finish();
  [[nodiscard]] size_t kernel_queued();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  server_context& ctx_;
  boost::beast::flat_buffer in_;
  std::deque<std::shared_ptr<const std::string>> out_;
  // Bytes sent to this client and not yet written, counted when `send` is
  // called (on any thread), so messages still waiting to be posted to the
  // strand count too: the bound holds also when the network thread is the
  // one falling behind. What the kernel holds is added on the strand
  // (`queue`), where the socket may be asked.
  std::atomic<size_t> queued_{0};
  std::atomic<bool> drop_posted_{false};
  bool writing_ = false;
  bool closed_ = false;
  uint64_t player_ = 0;
};

} // namespace game
