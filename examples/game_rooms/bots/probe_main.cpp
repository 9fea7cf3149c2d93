// SPDX-License-Identifier: Apache-2.0
// game_probe: starts a game_rooms server, runs one probe client against
// it, checks what it saw, and exits 0 (as promised) or 1 (with what
// happened instead). docs/game_rooms.md says what each promise is.
//
//   game_probe never_reads  [--flood-kb N] -- <game_rooms ... --outbound-kb M>
//   game_probe invalid_utf8 -- <game_rooms ...>
//   game_probe fresh_names  [--names N] -- <game_rooms ...>

#include <cstdio>
#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include <command_line.hpp>

#include "probes.hpp"
#include "server_process.hpp"

namespace {

constexpr const char* usage =
  "usage: game_probe <never_reads|invalid_utf8|fresh_names> [options] -- server command...\n"
  "  --flood-kb N     never_reads: chat bytes asked back (default 384)\n"
  "  --watchdog S     never_reads: longest wait for the close (default 10)\n"
  "  --names N        fresh_names: names that join and leave (default 20000;\n"
  "                   joins and leaves per second printed per 1,000)\n";

// The number after "\"<key>\":" in the server's stats object (-1: none).
long long stat(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\":");
  return at == std::string::npos
           ? -1
           : std::stoll(json.substr(at + key.size() + 3));
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> server_cmd;
  int own = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string{argv[i]} == "--") {
      own = i;
      for (int j = i + 1; j < argc; ++j)
        server_cmd.emplace_back(argv[j]);
      break;
    }
  if (own < 2 || server_cmd.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::string probe = argv[1];
  argv[1] = argv[0]; // the options follow the probe's name
  keylane::cli::command_line cl{"game_probe", usage, "--help"};
  uint64_t flood_kb = 384, watchdog = 10, names = 20000;
  cl.count("--flood-kb", flood_kb, 1);
  cl.count("--watchdog", watchdog, 1);
  cl.count("--names", names, 1);
  cl.parse(own - 1, argv + 1);
  if (probe != "never_reads" && probe != "invalid_utf8"
      && probe != "fresh_names")
    cl.fail("the probe is never_reads, invalid_utf8 or fresh_names");

  bots::server_process server;
  if (!server.start(server_cmd))
    return 1;
  boost::asio::ip::tcp::endpoint to{boost::asio::ip::make_address("127.0.0.1"),
                                    server.port()};
  bool ok = false;
  if (probe == "never_reads") {
    auto r = bots::run_never_reads(to, "room-1", flood_kb * 1024,
                                   std::chrono::seconds(watchdog));
    server.stop();
    auto dropped = stat(server.stats(), "slow_dropped");
    std::printf("never_reads: asked for %zu bytes back, %s; server "
                "slow_dropped %lld\n",
                r.flooded,
                r.closed ? ("closed " + std::to_string(r.after.count())
                            + " ms after the first").c_str()
                         : ("still open after the " + std::to_string(watchdog)
                            + " s watchdog").c_str(),
                dropped);
    ok = r.closed && dropped == 1;
  } else if (probe == "fresh_names") {
    // A measurement more than a check: it passes when every name was
    // welcomed; the rates say whether a room's cost grows with them.
    constexpr size_t block = 1000;
    auto r = bots::run_fresh_names(to, "room-0", names, block);
    server.stop();
    std::printf("fresh_names: %zu of %llu names joined and left; per second, "
                "per %zu:",
                r.names, static_cast<unsigned long long>(names), block);
    for (auto x : r.per_second)
      std::printf(" %.0f", x);
    std::printf("\n");
    ok = r.names == names;
  } else {
    auto r = bots::run_invalid_utf8(to, "room-1");
    server.stop();
    std::printf("invalid_utf8: %s\n",
                r.close_code != 0
                  ? ("closed with " + std::to_string(r.close_code)).c_str()
                  : ("not closed; answered '" + r.answer + "'").c_str());
    ok = r.close_code == 1007;
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
