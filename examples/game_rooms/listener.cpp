// SPDX-License-Identifier: Apache-2.0
#include "listener.hpp"

#include <boost/asio/strand.hpp>

#include "http_session.hpp"

namespace game {

namespace net = boost::asio;
using tcp = net::ip::tcp;

listener::listener(net::io_context& ioc, tcp::endpoint at,
                   server_context& ctx)
  : ioc_(ioc), acceptor_(ioc), ctx_(ctx) {
  acceptor_.open(at.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(at);
  acceptor_.listen(net::socket_base::max_listen_connections);
}

unsigned short listener::port() const {
  return acceptor_.local_endpoint().port();
}

void listener::run() { accept(); }

void listener::accept() {
  acceptor_.async_accept(
    net::make_strand(ioc_),
    [self = shared_from_this()](boost::system::error_code ec,
                                tcp::socket s) {
      if (!ec) {
        boost::system::error_code ignored;
        s.set_option(tcp::no_delay(true), ignored);
        if (self->ctx_.sndbuf > 0)
          s.set_option(net::socket_base::send_buffer_size(self->ctx_.sndbuf),
                       ignored);
        std::make_shared<http_session>(std::move(s), self->ctx_)->run();
      }
      if (self->acceptor_.is_open())
        self->accept();
    });
}

} // namespace game
