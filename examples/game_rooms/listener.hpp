// SPDX-License-Identifier: Apache-2.0
#pragma once

// Accepts connections on one port and starts an `http_session` for each.

#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "server_context.hpp"

namespace game {

/// The accepting socket.
///
/// Thread-safety: runs on its io_context.
class listener final : public std::enable_shared_from_this<listener> {
public:
  listener(boost::asio::io_context& ioc, boost::asio::ip::tcp::endpoint at,
           server_context& ctx);

  /// The port it listens on (the chosen one for port 0).
  [[nodiscard]] unsigned short port() const;

  /// Starts accepting.
  void run();

private:
  void accept();

  boost::asio::io_context& ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  server_context& ctx_;
};

} // namespace game
