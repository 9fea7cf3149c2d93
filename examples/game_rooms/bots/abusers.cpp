// SPDX-License-Identifier: Apache-2.0
#include "abusers.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace bots {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using ws_stream = beast::websocket::stream<tcp::socket>;

namespace {

// Blocking reads give up after `s` seconds, so a server that never
// answers fails the check instead of hanging the test.
void read_timeout(tcp::socket& s, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool connect(ws_stream& ws, tcp::endpoint to, int rcvbuf = 0) {
  beast::error_code ec;
  auto& s = ws.next_layer();
  s.open(to.protocol(), ec);
  if (rcvbuf > 0) // before connect, so the window is small from the start
    s.set_option(net::socket_base::receive_buffer_size(rcvbuf), ec);
  s.connect(to, ec);
  if (ec)
    return false;
  read_timeout(s, 5);
  ws.handshake(to.address().to_string(), "/", ec);
  return !ec;
}

// Reads until a message starting with `prefix`; false on error.
bool read_until(ws_stream& ws, const std::string& prefix, int most = 400) {
  beast::flat_buffer buf;
  for (int i = 0; i < most; ++i) {
    beast::error_code ec;
    ws.read(buf, ec);
    if (ec)
      return false;
    auto text = beast::buffers_to_string(buf.data());
    buf.consume(buf.size());
    if (text.compare(0, prefix.size(), prefix) == 0)
      return true;
  }
  return false;
}

} // namespace

void run_garbage(tcp::endpoint to, const std::string& room, abuse_report& out) {
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to))
    return;
  std::vector<std::string> bad{"hello",
                               "join",
                               "join room-99999 g",
                               "join " + room + " bad!name",
                               "input x 1 1",
                               "input 1 5 5",
                               "leave",
                               "chat " + std::string(300, 'z'),
                               ""};
  beast::error_code ec;
  for (auto& frame : bad) {
    ws.write(net::buffer(frame), ec);
    ++out.bad_sent;
  }
  ws.binary(true);
  ws.write(net::buffer(std::string{"\x01\x02\x03"}), ec);
  ++out.bad_sent;
  ws.text(true);
  beast::flat_buffer buf;
  for (int i = 0; i < out.bad_sent; ++i) {
    ws.read(buf, ec);
    if (ec)
      return;
    if (beast::buffers_to_string(buf.data()).compare(0, 4, "err ") == 0)
      ++out.bad_answered;
    buf.consume(buf.size());
  }
  ws.write(net::buffer("join " + room + " abuser-g"), ec);
  if (!read_until(ws, "welcome "))
    return;
  ws.write(net::buffer(std::string{"join room-1 again"}), ec);
  out.usable_after = read_until(ws, "err already_joined")
                     && read_until(ws, "snap ");
  ws.close(beast::websocket::close_code::normal, ec);
}

void run_oversized(tcp::endpoint to, const std::string& room,
                   abuse_report& out) {
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to))
    return;
  beast::error_code ec;
  ws.write(net::buffer("join " + room + " abuser-o"), ec);
  if (!read_until(ws, "welcome "))
    return;
  ws.write(net::buffer("chat " + std::string(64 * 1024, 'x')), ec);
  // The server closes: reading ends in an error, not in a timeout.
  beast::flat_buffer buf;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    ws.read(buf, ec);
    buf.consume(buf.size());
    if (ec) {
      out.oversized_closed = ec != net::error::would_block
                             && ec != net::error::try_again
                             && ec != net::error::timed_out;
      return;
    }
  }
}

void run_stalled(tcp::endpoint to, const std::string& room,
                 const std::atomic<bool>& done, abuse_report& out) {
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to, 4096))
    return;
  beast::error_code ec;
  ws.write(net::buffer("join " + room + " abuser-s"), ec);
  if (!read_until(ws, "welcome "))
    return;
  // Every chat line comes back to every player of the room, this one too,
  // which it never reads: its queue on the server fills quickly.
  auto line = "chat " + std::string(190, 's');
  for (int i = 0; i < 400 && !ec; ++i)
    ws.write(net::buffer(line), ec);
  while (!done)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Dropped: what is buffered drains, then the connection ends. Alive:
  // snapshots keep coming until the deadline.
  beast::flat_buffer buf;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    ws.read(buf, ec);
    buf.consume(buf.size());
    if (ec) {
      out.stalled_dropped = true;
      return;
    }
  }
}

} // namespace bots
