// SPDX-License-Identifier: Apache-2.0
#pragma once

// The first request on a connection: a WebSocket upgrade becomes a
// `ws_session`; `GET /` gets the page; `GET /hold` answers after 5 s (the
// page's hold for headless browsers); anything else a 404.

#include <memory>
#include <optional>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "server_context.hpp"

namespace game {

/// One HTTP connection until it upgrades or is answered.
///
/// Thread-safety: runs on the connection's strand.
class http_session final : public std::enable_shared_from_this<http_session> {
public:
  http_session(boost::asio::ip::tcp::socket s, server_context& ctx)
    : stream_(std::move(s)), ctx_(ctx) {}

  /// Reads the request.
  void run();

private:
  void on_read(boost::beast::error_code ec);
  void respond(bool ok, const std::string& body);

  boost::beast::tcp_stream stream_;
  server_context& ctx_;
  boost::beast::flat_buffer buf_;
  std::optional<boost::beast::http::request_parser<
    boost::beast::http::string_body>>
    parser_;
  std::shared_ptr<void> res_;
  std::optional<boost::asio::steady_timer> timer_;
};

} // namespace game
