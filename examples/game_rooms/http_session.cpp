// SPDX-License-Identifier: Apache-2.0
#include "http_session.hpp"

#include <chrono>

#include <boost/beast/websocket.hpp>

#include "page.hpp"
#include "ws_session.hpp"

namespace game {

namespace beast = boost::beast;
namespace http = beast::http;

void http_session::run() {
  parser_.emplace();
  parser_->body_limit(ctx_.max_message);
  parser_->header_limit(8192);
  stream_.expires_after(std::chrono::seconds(10));
  http::async_read(stream_, buf_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->on_read(ec);
                   });
}

void http_session::on_read(beast::error_code ec) {
  if (ec)
    return; // a bad or slow request: just the connection goes
  if (beast::websocket::is_upgrade(parser_->get())) {
    std::make_shared<ws_session>(stream_.release_socket(), ctx_)
      ->run(parser_->release());
    return;
  }
  auto& req = parser_->get();
  if (req.method() == http::verb::get && req.target().starts_with("/hold")) {
    // The page's hold for headless browsers (see page.cpp): answered after
    // a while, and nothing depends on its body.
    timer_.emplace(stream_.get_executor());
    timer_->expires_after(std::chrono::seconds(5));
    timer_->async_wait([self = shared_from_this()](beast::error_code) {
      self->respond(true, "");
    });
    return;
  }
  bool page = req.method() == http::verb::get
              && (req.target() == "/" || req.target().starts_with("/?"));
  if (page)
    ++ctx_.stats.pages_served;
  respond(page, page ? page_html() : "not found\n");
}

void http_session::respond(bool ok, const std::string& body) {
  auto res = std::make_shared<http::response<http::string_body>>(
    ok ? http::status::ok : http::status::not_found, parser_->get().version());
  res->set(http::field::content_type,
           ok ? "text/html; charset=utf-8" : "text/plain");
  res->set(http::field::cache_control, "no-store");
  res->body() = body;
  res->keep_alive(false);
  res->prepare_payload();
  res_ = res;
  http::async_write(stream_, *res,
                    [self = shared_from_this()](beast::error_code, size_t) {
                      beast::error_code ignored;
                      self->stream_.socket().shutdown(
                        boost::asio::ip::tcp::socket::shutdown_send, ignored);
                    });
}

} // namespace game
