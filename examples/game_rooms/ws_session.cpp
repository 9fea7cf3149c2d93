// SPDX-License-Identifier: Apache-2.0
#include "ws_session.hpp"

#include <sys/ioctl.h>
#include <linux/sockios.h>

#include <boost/asio/post.hpp>

#include "protocol.hpp"

namespace game {

namespace beast = boost::beast;
namespace websocket = beast::websocket;

ws_session::ws_session(boost::asio::ip::tcp::socket s, server_context& ctx)
  : ws_(std::move(s)), ctx_(ctx) {}

void ws_session::run(beast::http::request<beast::http::string_body> req) {
  beast::get_lowest_layer(ws_).expires_never();
  ws_.set_option(
    websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.read_message_max(ctx_.max_message);
  // One frame (one write) per message: Beast otherwise splits a message
  // into 4 KiB frames, and a hot room's snapshot is bigger than that.
  ws_.auto_fragment(false);
  ++ctx_.stats.connections;
  ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
    if (!ec)
      self->read();
  });
}

void ws_session::read() {
  ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec,
                                                  size_t) {
    self->on_read(ec);
  });
}

void ws_session::on_read(beast::error_code ec) {
  if (ec) {
    if (ec == websocket::error::message_too_big)
      ++ctx_.stats.oversized;
    finish();
    return;
  }
  if (!ws_.got_text()) {
    ++ctx_.stats.bad_frames;
    reply("err bad_command binary frames are not commands");
  } else {
    auto data = in_.data();
    handle({static_cast<const char*>(data.data()), data.size()});
  }
  in_.consume(in_.size());
  if (!closed_)
    read();
}

void ws_session::handle(std::string_view frame) {
  client_command cmd;
  std::string why;
  if (!parse_command(frame, cmd, why)) {
    ++ctx_.stats.bad_frames;
    return reply("err " + why);
  }
  if (cmd.what == client_command::kind::join) {
    if (player_ != 0)
      return reply("err already_joined");
    player_ = ctx_.rooms.join(shared_from_this(), cmd.room,
                              std::move(cmd.name), why);
    if (player_ == 0)
      reply("err " + why + " " + cmd.room);
    return;
  }
  if (player_ == 0)
    return reply("err not_joined");
  if (cmd.what == client_command::kind::leave) {
    ctx_.rooms.leave(player_);
    player_ = 0;
    return reply("left");
  }
  room_msg m;
  m.player = player_;
  if (cmd.what == client_command::kind::input) {
    m.what = room_msg::kind::input;
    m.seq = cmd.seq;
    m.dx = cmd.dx;
    m.dy = cmd.dy;
  } else {
    m.what = room_msg::kind::chat;
    m.text = std::move(cmd.text);
  }
  if (!ctx_.rooms.forward(std::move(m)))
    reply("err busy");
}

void ws_session::reply(std::string text) {
  auto msg = std::make_shared<const std::string>(std::move(text));
  if (queued_.fetch_add(msg->size()) + msg->size() > ctx_.outbound_limit) {
    queued_ -= msg->size();
    return drop_slow();
  }
  queue(std::move(msg));
}

void ws_session::send(std::shared_ptr<const std::string> msg) {
  auto size = msg->size();
  if (queued_.fetch_add(size) + size > ctx_.outbound_limit) {
    // It does not read (or we cannot write fast enough): drop it rather
    // than hold memory for it; its room never waits for it.
    queued_ -= size;
    if (!drop_posted_.exchange(true))
      boost::asio::post(ws_.get_executor(),
                        [self = shared_from_this()] { self->drop_slow(); });
    return;
  }
  boost::asio::post(ws_.get_executor(),
                    [self = shared_from_this(), m = std::move(msg)]() mutable {
                      self->queue(std::move(m));
                    });
}

void ws_session::drop_slow() {
  if (closed_)
    return;
  ++ctx_.stats.slow_dropped;
  finish();
  beast::error_code ignored;
  auto& s = beast::get_lowest_layer(ws_).socket();
  // An abortive close: a polite one would keep what the kernel holds for
  // this client until it reads it (or TCP gives up, minutes later), and
  // the client would not see the end before reading all of it.
  s.set_option(boost::asio::socket_base::linger(true, 0), ignored);
  s.close(ignored);
}

size_t ws_session::kernel_queued() {
  // Bytes in the socket's send queue not yet acknowledged by the client.
  int n = 0;
  if (::ioctl(beast::get_lowest_layer(ws_).socket().native_handle(), SIOCOUTQ,
              &n)
      != 0)
    return 0;
  return static_cast<size_t>(n);
}

void ws_session::queue(std::shared_ptr<const std::string> msg) {
  if (closed_) {
    queued_ -= msg->size();
    return;
  }
  // Writes complete as soon as the kernel takes the bytes, and its send
  // buffer holds megabytes (2.8 MB of 200-byte writes to a loopback client
  // that never read): counting our queue alone, such a client was held
  // for minutes. So what the kernel holds counts against the bound too.
  if (queued_ + kernel_queued() > ctx_.outbound_limit) {
    queued_ -= msg->size();
    return drop_slow();
  }
  out_.push_back(std::move(msg));
  if (!writing_)
    write_next();
}

void ws_session::write_next() {
  writing_ = true;
  ws_.text(true);
  ws_.async_write(boost::asio::buffer(*out_.front()),
                  [self = shared_from_this()](beast::error_code ec, size_t) {
                    self->queued_ -= self->out_.front()->size();
                    self->out_.pop_front();
                    if (ec)
                      return self->finish();
                    if (!self->out_.empty() && !self->closed_)
                      self->write_next();
                    else
                      self->writing_ = false;
                  });
}

void ws_session::finish() {
  if (closed_)
    return;
  closed_ = true;
  if (player_ != 0)
    ctx_.rooms.leave(player_);
  player_ = 0;
}

} // namespace game
