// SPDX-License-Identifier: Apache-2.0
// game_rooms: a game server on keylane. A room is a key; its lane holds the
// room in keyed state; players talk WebSocket (Boost.Beast) on one port,
// which also serves the page at `GET /`. `--rooms-on single_loop` runs the
// same rooms on one game-loop thread instead, the baseline.
//
//   game_rooms --port 8080 --rooms 100 [--state DIR] [--rooms-on keylane]
//
// Prints "listening <port>" once it accepts, and its counters as
// "stats {...}" when SIGINT or SIGTERM stops it.

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <command_line.hpp>

#include <keylane/usable_cpus.hpp>

#include "keylane_rooms.hpp"
#include "listener.hpp"
#include "server_context.hpp"
#include "single_loop_rooms.hpp"
#include "world.hpp"

namespace {

constexpr const char* usage =
  "usage: game_rooms [options]\n"
  "  --port N            listen port (default 8080; 0 picks one)\n"
  "  --bind ADDR         listen address (default 127.0.0.1)\n"
  "  --rooms N           rooms room-0 .. room-<N-1> (default 100)\n"
  "  --max-rooms N       most rooms with players at once (default 512)\n"
  "  --rooms-on E        keylane | single_loop (default keylane)\n"
  "  --tick-cost-us N    CPU per room per tick (default 50)\n"
  "  --threads N         keylane worker threads (default: the CPUs the\n"
  "                      process may use, less --io-threads; at least 1)\n"
  "  --io-threads N      network threads (default 1)\n"
  "  --state DIR         keep rooms in RocksDB under DIR (default: memory)\n"
  "  --linger-ms N       an empty room's lane lingers this long (default 200)\n"
  "  --lane-batch N      events a room's lane runs per turn (default 1024)\n"
  "  --max-message N     largest client frame in bytes (default 1024)\n"
  "  --outbound-kb N     queued bytes before a client is dropped (default 256)\n"
  "  --sndbuf N          SO_SNDBUF of client sockets (default: system)\n";

} // namespace

int main(int argc, char** argv) {
  // Only "--help": "-h" has always been a mistake here.
  keylane::cli::command_line cl{"game_rooms", usage, "--help"};
  unsigned short port = 8080;
  std::string bind = "127.0.0.1", engine = "keylane", state_dir;
  size_t rooms = 100, max_rooms = 512, threads = 0, io_threads = 1;
  size_t linger = 200, max_message = 1024, outbound_kb = 256, sndbuf = 0;
  // A hot room gets 2,000 inputs a second; with keylane's default turn of
  // 64 events its lane drains at the pace of the shard's round and its
  // ticks fall seconds behind (measured: hot room tick p99 518 ms at 64,
  // 67 ms at 1024, 1,000 bots over 1,000 rooms; docs/game_rooms.md).
  size_t lane_batch = 1024;
  uint32_t tick_cost = 50;
  uint64_t port_number = port;
  cl.count("--port", port_number, 0, 65535);
  cl.text("--bind", bind);
  cl.count("--rooms", rooms, 1);
  cl.count("--max-rooms", max_rooms, 1);
  cl.text("--rooms-on", engine);
  cl.count("--tick-cost-us", tick_cost, 0);
  cl.count("--threads", threads, 0);
  cl.count("--io-threads", io_threads, 1);
  cl.text("--state", state_dir);
  cl.count("--linger-ms", linger, 0);
  cl.count("--lane-batch", lane_batch, 1, 1000000);
  cl.count("--max-message", max_message, 16);
  cl.count("--outbound-kb", outbound_kb, 1);
  cl.count("--sndbuf", sndbuf, 0);
  cl.parse(argc, argv);
  if (engine != "keylane" && engine != "single_loop")
    cl.fail("--rooms-on must be keylane or single_loop");
  port = static_cast<unsigned short>(port_number);

  // Every thread here that is busy under load needs a core: the network
  // threads and keylane's workers. More of them than CPUs and they queue
  // for the cores: a player's input, even one answered without a room,
  // waits for a core (docs/game_rooms.md, Decisions).
  if (threads == 0)
    threads = keylane::usable_cpus() > io_threads
                ? keylane::usable_cpus() - io_threads
                : 1;

  game::server_stats stats;
  stats.keylane_threads = engine == "keylane" ? threads : 0;
  stats.io_threads = io_threads;
  game::world w{rooms, max_rooms, stats};
  game::server_context ctx{w, stats, max_message, outbound_kb * 1024,
                           static_cast<int>(sndbuf)};
  boost::asio::io_context ioc{static_cast<int>(io_threads)};
  std::unique_ptr<game::rooms_engine> eng;
  if (engine == "keylane") {
    game::keylane_rooms_settings cfg;
    cfg.tick_cost_us = tick_cost;
    cfg.runtime.threads = threads;
    // Twice the room cap: lanes of rooms that just emptied linger, and the
    // rooms with players must never be the ones retired to make room.
    cfg.runtime.max_active_keys = 2 * max_rooms;
    cfg.runtime.lane_linger_ms = linger;
    cfg.turn_budget = lane_batch; // the rooms' own, not every key's
    cfg.runtime.key_backlog = 4096;
    cfg.runtime.window = 1 << 20;
    cfg.runtime.metrics_latency = false;
    if (state_dir.empty()) {
      cfg.runtime.state_store = keylane::state_backend::memory;
    } else {
      cfg.runtime.state_store = keylane::state_backend::rocksdb;
      cfg.runtime.state_path = state_dir;
    }
    auto k = std::make_unique<game::keylane_rooms>(w, stats);
    w.attach(k.get());
    if (auto err = k->start(std::move(cfg)); !err.empty()) {
      std::fprintf(stderr, "game_rooms: %s\n", err.c_str());
      return 1;
    }
    eng = std::move(k);
  } else {
    auto s = std::make_unique<game::single_loop_rooms>(w, stats, tick_cost, 50);
    w.attach(s.get());
    s->start();
    eng = std::move(s);
  }

  std::shared_ptr<game::listener> lst;
  try {
    lst = std::make_shared<game::listener>(
      ioc,
      boost::asio::ip::tcp::endpoint{boost::asio::ip::make_address(bind), port},
      ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "game_rooms: cannot listen on %s:%u: %s\n",
                 bind.c_str(), port, e.what());
    eng->stop();
    return 1;
  }
  lst->run();
  boost::asio::signal_set signals{ioc, SIGINT, SIGTERM};
  signals.async_wait([&](const boost::system::error_code&, int) { ioc.stop(); });
  std::printf("listening %u\n", lst->port());
  std::fflush(stdout);

  std::vector<std::thread> pool;
  for (size_t i = 1; i < io_threads; ++i)
    pool.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : pool)
    t.join();
  eng->stop(); // writes every room's state before it returns
  std::printf("stats %s\n", stats.json().c_str());
  std::fflush(stdout);
}
