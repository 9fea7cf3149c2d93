// SPDX-License-Identifier: Apache-2.0
// game_bots: N bots over M rooms of a game_rooms server, one hot room, some
// bots walking through portals; reports input -> snapshot latency, tick
// regularity, lost or reordered snapshots and lost transfers.
//
//   game_bots --port 8080 --bots 1000 --rooms 100 --seconds 20 [--json]
//   game_bots --bots 50 --rooms 10 --json -- ./game_rooms --port 0 --rooms 10
//
// With `-- <server command>` it starts the server itself, learns its port
// from its first line, stops it at the end and adds its counters.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>

#include <command_line.hpp>

#include "abusers.hpp"
#include "bot.hpp"
#include "bot_stats.hpp"
#include "server_process.hpp"

namespace {

using namespace std::chrono_literals;

constexpr const char* usage =
  "usage: game_bots [options] [-- server command...]\n"
  "  --host ADDR      server address (default 127.0.0.1)\n"
  "  --port N         server port (default 8080; ignored with a server command)\n"
  "  --bots N         bots (default 1000)\n"
  "  --rooms M        rooms the bots spread over (default 100)\n"
  "  --hot PCT        share of bots in the hot room room-0 (default 20)\n"
  "  --walkers PCT    share of bots heading for portals (default 10)\n"
  "  --rate N         inputs per second per bot (default 10)\n"
  "  --seconds S      measured run time (default 10)\n"
  "  --seed N         random seed (default 1)\n"
  "  --abuse          also run clients sending bad input (in room-0), and one\n"
  "                   that stops reading (alone in room-<rooms>: the server\n"
  "                   needs one room more than the bots)\n"
  "  --exec CMD       run CMD once all bots joined ({url} is the page's URL)\n"
  "  --exec-output F  write CMD's standard output to F\n"
  "  --json           print one JSON object\n";

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

std::string replace_all(std::string s, const std::string& what,
                        const std::string& with) {
  for (auto at = s.find(what); at != std::string::npos;
       at = s.find(what, at + with.size()))
    s.replace(at, what.size(), with);
  return s;
}

// Runs `cmd` through the shell; its exit status, its output in `out`.
int run_command(const std::string& cmd, std::string& out) {
  auto* p = ::popen(cmd.c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

} // namespace

int main(int argc, char** argv) {
  // Everything after "--" is the server's command line.
  std::vector<std::string> server_cmd;
  int own = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string{argv[i]} == "--") {
      own = i;
      for (int j = i + 1; j < argc; ++j)
        server_cmd.emplace_back(argv[j]);
      break;
    }
  // Only "--help": "-h" has always been a mistake here.
  keylane::cli::command_line cl{"game_bots", usage, "--help"};
  std::string host = "127.0.0.1", exec_cmd, exec_out;
  uint64_t port = 8080, n_bots = 1000, n_rooms = 100, hot = 20, walkers = 10;
  uint64_t rate = 10, seconds = 10, seed = 1;
  bool json = false, abuse = false;
  cl.flag("--json", json);
  cl.flag("--abuse", abuse);
  cl.text("--host", host);
  cl.count("--port", port, 1);
  cl.count("--bots", n_bots, 1);
  cl.count("--rooms", n_rooms, 1);
  cl.count("--hot", hot, 0);
  cl.count("--walkers", walkers, 0);
  cl.count("--rate", rate, 1);
  cl.count("--seconds", seconds, 1);
  cl.count("--seed", seed, 0);
  cl.text("--exec", exec_cmd);
  cl.text("--exec-output", exec_out);
  cl.parse(own, argv);
  hot = std::min<uint64_t>(hot, 100);
  walkers = std::min<uint64_t>(walkers, 100);

  bots::server_process server;
  if (!server_cmd.empty()) {
    if (!server.start(server_cmd))
      return 1;
    port = server.port();
  }
  boost::asio::ip::tcp::endpoint to{boost::asio::ip::make_address(host),
                                    static_cast<unsigned short>(port)};

  boost::asio::io_context ioc;
  bots::bot_stats stats;
  std::vector<std::shared_ptr<bots::bot>> fleet;
  uint64_t n_hot = n_rooms > 1 ? n_bots * hot / 100 : n_bots;
  for (uint64_t i = 0; i < n_bots; ++i) {
    bots::bot_plan plan;
    plan.room = "room-"
                + std::to_string(i < n_hot ? 0 : 1 + (i - n_hot) % (n_rooms - 1));
    plan.name = "bot" + std::to_string(i);
    plan.walker = walkers > 0 && (i * walkers) % 100 < walkers;
    plan.every = std::chrono::milliseconds(1000 / rate);
    plan.seed = seed * 1000003 + i;
    fleet.push_back(std::make_shared<bots::bot>(ioc, plan, stats));
  }
  auto work = boost::asio::make_work_guard(ioc);
  std::thread io{[&] { ioc.run(); }};
  boost::asio::post(ioc, [&] {
    for (auto& b : fleet)
      b->start(to);
  });

  bots::abuse_report abused;
  std::atomic<bool> stalled_done{false};
  std::vector<std::thread> abusers;
  if (abuse) {
    abusers.emplace_back([&] { bots::run_garbage(to, "room-0", abused); });
    abusers.emplace_back([&] { bots::run_oversized(to, "room-0", abused); });
    // Alone in a room past the bots' ones: its flood of chat comes back to
    // it only (chat is not rate-limited; see docs/game_rooms.md).
    abusers.emplace_back([&, room = "room-" + std::to_string(n_rooms)] {
      bots::run_stalled(to, room, stalled_done, abused);
    });
  }

  // Measure from the moment every bot is in (or 30 s, on a sick server).
  auto t0 = std::chrono::steady_clock::now();
  while (stats.joined + stats.join_refused < n_bots && std::chrono::steady_clock::now() - t0 < 30s)
    std::this_thread::sleep_for(10ms);
  auto start = std::chrono::steady_clock::now();
  int exec_status = 0;
  if (!exec_cmd.empty()) {
    std::string out;
    exec_status = run_command(
      replace_all(exec_cmd, "{url}",
                  "http://" + host + ":" + std::to_string(port)
                    + "/?room=room-0&name=viewer"),
      out);
    if (!exec_out.empty())
      std::ofstream{exec_out} << out;
  }
  std::this_thread::sleep_until(start + std::chrono::seconds(seconds));

  // Quiet, then wait for every transfer under way to land (or 10 s).
  boost::asio::post(ioc, [&] {
    for (auto& b : fleet)
      b->quiet();
  });
  auto t1 = std::chrono::steady_clock::now();
  while (stats.in_transit > 0 && std::chrono::steady_clock::now() - t1 < 10s)
    std::this_thread::sleep_for(10ms);
  stalled_done = true;
  for (auto& t : abusers)
    t.join();
  boost::asio::post(ioc, [&] {
    for (auto& b : fleet)
      b->stop();
  });
  work.reset();
  io.join();
  int server_status = server.stop();

  const auto& lat = stats.latency;
  auto p50 = bots::quantile_ms(lat, 0.5), p99 = bots::quantile_ms(lat, 0.99),
       p999 = bots::quantile_ms(lat, 0.999);
  auto iv = bots::intervals(stats, "room-0");
  if (json) {
    std::string o = "{";
    auto add = [&](const std::string& k, const std::string& v) {
      if (o.size() > 1)
        o += ",";
      o += "\"" + k + "\":" + v;
    };
    auto num = [](uint64_t x) { return std::to_string(x); };
    add("bots", num(stats.bots));
    add("rooms", num(n_rooms));
    add("seconds", num(seconds));
    add("joined", num(stats.joined));
    add("join_refused", num(stats.join_refused));
    add("dropped", num(stats.dropped));
    add("inputs", num(stats.inputs));
    add("snapshots", num(stats.snapshots));
    add("latency_ms", "{\"p50\":" + fmt(p50) + ",\"p99\":" + fmt(p99)
                        + ",\"p999\":" + fmt(p999)
                        + ",\"samples\":" + num(lat.count()) + "}");
    add("tick_interval_ms",
        "{\"p50\":" + fmt(iv.p50) + ",\"p99\":" + fmt(iv.p99)
          + ",\"worst_room_p99\":" + fmt(iv.worst_room_p99)
          + ",\"worst_room\":\"" + iv.worst_room + "\",\"hot_room_p99\":"
          + fmt(iv.hot_p99) + ",\"samples\":" + num(iv.samples) + "}");
    add("snapshots_lost", num(stats.lost));
    add("snapshots_out_of_order", num(stats.out_of_order));
    add("portals", num(stats.portals));
    add("transfers_done", num(stats.arrivals));
    add("transfers_refused", num(stats.refused));
    add("transfers_lost", num(stats.transfers_lost));
    add("errors", num(stats.errors));
    add("hot_room", "{\"first_tick\":" + num(stats.hot_first_tick)
                      + ",\"last_tick\":" + num(stats.hot_last_tick)
                      + ",\"first_scores\":"
                      + std::to_string(stats.hot_first_scores)
                      + ",\"last_scores\":"
                      + std::to_string(stats.hot_last_scores) + "}");
    if (abuse)
      add("abuse", "{\"bad_sent\":" + std::to_string(abused.bad_sent)
                     + ",\"bad_answered\":" + std::to_string(abused.bad_answered)
                     + ",\"usable_after\":"
                     + (abused.usable_after ? "true" : "false")
                     + ",\"oversized_closed\":"
                     + (abused.oversized_closed ? "true" : "false")
                     + ",\"stalled_dropped\":"
                     + (abused.stalled_dropped ? "true" : "false") + "}");
    if (!exec_cmd.empty())
      add("exec_status", std::to_string(exec_status));
    if (!server_cmd.empty()) {
      add("server_exit", std::to_string(server_status));
      add("server", server.stats());
    }
    std::printf("%s}\n", o.c_str());
  } else {
    std::printf("bots %llu joined %llu dropped %llu over %llu rooms, %llu s\n",
                (unsigned long long) stats.bots,
                (unsigned long long) stats.joined.load(),
                (unsigned long long) stats.dropped,
                (unsigned long long) n_rooms, (unsigned long long) seconds);
    std::printf("input -> snapshot ms   p50 %s  p99 %s  p99.9 %s  (%zu)\n",
                fmt(p50).c_str(), fmt(p99).c_str(), fmt(p999).c_str(),
                static_cast<size_t>(lat.count()));
    std::printf("tick interval ms       p50 %s  p99 %s  worst room p99 %s (%s)"
                "  hot room p99 %s\n",
                fmt(iv.p50).c_str(), fmt(iv.p99).c_str(),
                fmt(iv.worst_room_p99).c_str(), iv.worst_room.c_str(),
                fmt(iv.hot_p99).c_str());
    std::printf("snapshots %llu lost %llu out of order %llu\n",
                (unsigned long long) stats.snapshots,
                (unsigned long long) stats.lost,
                (unsigned long long) stats.out_of_order);
    std::printf("portals %llu transfers done %llu refused %llu lost %llu\n",
                (unsigned long long) stats.portals,
                (unsigned long long) stats.arrivals,
                (unsigned long long) stats.refused,
                (unsigned long long) stats.transfers_lost);
    if (!server_cmd.empty())
      std::printf("server exit %d stats %s\n", server_status,
                  server.stats().c_str());
  }
  return 0;
}
