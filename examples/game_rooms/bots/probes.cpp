// SPDX-License-Identifier: Apache-2.0
#include "probes.hpp"

#include <poll.h>
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

// Connects and upgrades; a small `rcvbuf` (set before connect, so the
// window is small from the start) keeps what the client's kernel takes
// for it small. Blocking reads give up after 5 s, so a server that never
// answers fails the probe instead of hanging it.
bool connect(ws_stream& ws, tcp::endpoint to, int rcvbuf = 0) {
  beast::error_code ec;
  auto& s = ws.next_layer();
  s.open(to.protocol(), ec);
  if (rcvbuf > 0)
    s.set_option(net::socket_base::receive_buffer_size(rcvbuf), ec);
  s.connect(to, ec);
  if (ec)
    return false;
  timeval tv{5, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ws.handshake(to.address().to_string(), "/", ec);
  return !ec;
}

bool join(ws_stream& ws, const std::string& room, const std::string& name) {
  beast::error_code ec;
  ws.write(net::buffer("join " + room + " " + name), ec);
  beast::flat_buffer buf;
  for (int i = 0; i < 100 && !ec; ++i) {
    ws.read(buf, ec);
    auto text = beast::buffers_to_string(buf.data());
    buf.consume(buf.size());
    if (text.compare(0, 8, "welcome ") == 0)
      return true;
  }
  return false;
}

} // namespace

stalled_report run_never_reads(tcp::endpoint to, const std::string& room,
                               size_t flood, std::chrono::seconds watchdog) {
  stalled_report out;
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to, 4096) || !join(ws, room, "never-reads"))
    return out;
  // Every chat line comes back to every player of the room, and this one
  // is alone in it. One line a millisecond, game-like traffic the server
  // writes out at once: its own queue stays short and the bytes pile up
  // in the kernel's send buffer. Not reading, the client sees the end only
  // as a reset or hang-up on its socket (a polite close would wait behind
  // the data it does not read).
  auto line = "chat " + std::string(190, 's');
  pollfd p{ws.next_layer().native_handle(), POLLRDHUP, 0};
  auto ended = [&](int wait_ms) {
    return ::poll(&p, 1, wait_ms) > 0
           && (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) != 0;
  };
  auto t0 = std::chrono::steady_clock::now();
  beast::error_code ec;
  while (!out.closed && std::chrono::steady_clock::now() - t0 < watchdog) {
    if (out.flooded < flood && !ec) {
      ws.write(net::buffer(line), ec);
      out.flooded += line.size();
    }
    out.closed = ended(out.flooded < flood && !ec ? 1 : 100);
  }
  out.after = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - t0);
  return out;
}

fresh_names_report run_fresh_names(tcp::endpoint to, const std::string& room,
                                   size_t names, size_t block) {
  fresh_names_report out;
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to))
    return out;
  auto t0 = std::chrono::steady_clock::now();
  beast::error_code ec;
  while (out.names < names) {
    if (!join(ws, room, "fresh" + std::to_string(out.names)))
      return out;
    ws.write(net::buffer(std::string{"leave"}), ec);
    if (ec)
      return out;
    if (++out.names % block == 0) {
      auto t1 = std::chrono::steady_clock::now();
      std::chrono::duration<double> took = t1 - t0;
      out.per_second.push_back(static_cast<double>(block) / took.count());
      t0 = t1;
    }
  }
  return out;
}

utf8_report run_invalid_utf8(tcp::endpoint to, const std::string& room) {
  utf8_report out;
  net::io_context ioc;
  ws_stream ws{ioc};
  if (!connect(ws, to) || !join(ws, room, "bad-utf8"))
    return out;
  beast::error_code ec;
  // 0xC3 starts a two-byte sequence; '(' cannot continue it.
  ws.text(true);
  ws.write(net::buffer(std::string{"chat caf\xC3("}), ec);
  beast::flat_buffer buf;
  for (int i = 0; i < 100; ++i) {
    ws.read(buf, ec);
    if (ec == beast::websocket::error::closed) {
      out.close_code = ws.reason().code;
      return out;
    }
    if (ec)
      return out;
    auto text = beast::buffers_to_string(buf.data());
    buf.consume(buf.size());
    // Snapshots of the room keep coming; anything else is the answer.
    if (text.compare(0, 5, "snap ") != 0) {
      out.answer = text;
      return out;
    }
  }
  return out;
}

} // namespace bots
