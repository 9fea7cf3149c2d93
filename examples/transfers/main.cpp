// SPDX-License-Identifier: Apache-2.0
// transfers: keys that message keys. Random transfers between accounts;
// each debits its account and `tell`s the receiving account to credit
// itself. At the end every account's balance is read back and the total
// must be what the accounts started with.
//
//   transfers --accounts 100 --transfers 100000 [--opening 10000]
//             [--state DIR] [--seed N] [--exactly-once on|off]
//
// The kill -9 drill (drill.hpp) on a RocksDB directory:
//
//   transfers --drill KILLS --state DIR [--accounts N] [--debits N]
//             [--seed N] [--control]

#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <string>

#include <keylane/runtime.hpp>

#include <command_line.hpp>

#include "account.hpp"
#include "drill.hpp"

using transfers::transfer;

int main(int argc, char** argv) {
  size_t accounts = 100;
  size_t count = 100000;
  size_t opening = 10000;
  uint64_t seed = 1;
  std::string dir;
  std::string exactly_once = "on";
  size_t kills = 0, debits = 200;
  bool control = false, drill_run = false;
  keylane::cli::command_line cl{
    "transfers", "usage: transfers [--accounts N] [--transfers N] "
                 "[--opening N] [--state DIR] [--seed N] "
                 "[--exactly-once on|off]\n"
                 "       transfers --drill KILLS --state DIR [--accounts N] "
                 "[--debits N] [--seed N] [--control]\n"};
  cl.count("--accounts", accounts, 1, 1000000);
  cl.count("--transfers", count, 0, 100000000);
  cl.count("--opening", opening, 0, 1000000000);
  cl.text("--state", dir);
  cl.app().add_option("--seed", seed, "random seed");
  cl.app()
    .add_option("--exactly-once", exactly_once,
                "keep told credits in the sender's state (on) or not (off)")
    ->check(CLI::IsMember({"on", "off"}));
  cl.count("--drill", kills, 1, 1000);
  cl.count("--debits", debits, 1, 1000000);
  cl.app().add_flag("--control", control,
                    "the drill without exactly-once: it must find a loss "
                    "or a double");
  cl.app().add_flag("--drill-run", drill_run, "one run of the drill")
    ->group("");
  cl.parse(argc, argv);
  if (kills != 0 || drill_run) {
    if (dir.empty()) {
      std::fprintf(stderr, "transfers: the drill needs --state DIR\n");
      return 2;
    }
    transfers::drill_plan p;
    p.accounts = accounts;
    p.debits = debits;
    p.seed = seed;
    p.dir = dir;
    p.exactly_once = exactly_once == "on" && !control;
    if (drill_run)
      return transfers::drill_run(p);
    return transfers::drill(p, kills, control, "/proc/self/exe");
  }
  keylane::settings cfg;
  cfg.order = keylane::order_mode::per_key;
  cfg.park = keylane::park_mode::none;
  cfg.max_attempts = 1000; // a full message budget: try again shortly
  cfg.initial_backoff_ms = 1;
  cfg.max_backoff_ms = 10;
  cfg.state_store = dir.empty() ? keylane::state_backend::memory
                                : keylane::state_backend::rocksdb;
  cfg.state_path = dir;
  cfg.messaging_exactly_once = exactly_once == "on";
  std::mutex mtx;
  std::map<std::string, long> last; // each account's balance after its last event
  size_t refused = 0, failed = 0;
  auto rt = keylane::runtime<transfer, long>::start(
    cfg,
    [](const keylane::handler_params&) {
      return std::make_unique<transfers::account_handler>();
    },
    [&](keylane::event<transfer, long>& e) {
      std::lock_guard<std::mutex> guard{mtx};
      if (e.status == keylane::outcome::ok)
        last[e.key().to_string()] = *e.result;
      else if (e.status == keylane::outcome::skipped)
        ++refused;
      else
        ++failed;
    });
  if (!rt) {
    std::fprintf(stderr, "transfers: %s\n",
                 keylane::render(rt.error()).c_str());
    return 1;
  }
  auto name = [](size_t i) { return "acct-" + std::to_string(i); };
  auto submit = [&](const std::string& k, transfer m) {
    if (auto r = (*rt)->submit(k, std::move(m)); !r) {
      std::fprintf(stderr, "transfers: %s\n", keylane::to_string(r.code()));
      std::exit(1);
    }
  };
  for (size_t i = 0; i < accounts; ++i)
    submit(name(i), transfer{"", long(opening), true});
  std::mt19937_64 rng{seed};
  for (size_t i = 0; i < count; ++i) {
    auto from = rng() % accounts;
    auto to = rng() % accounts;
    submit(name(from), transfer{name(to), long(1 + rng() % 100), false});
  }
  if (!(*rt)->drain())
    return 1;
  // A zero credit to every account reads its balance after all it got.
  for (size_t i = 0; i < accounts; ++i)
    submit(name(i), transfer{"", 0, true});
  if (!(*rt)->drain())
    return 1;
  auto st = (*rt)->stats();
  (*rt)->stop();
  long total = 0;
  for (auto& [acct, balance] : last)
    total += balance;
  long expected = long(accounts) * long(opening);
  std::printf("accounts %zu transfers %zu refused %zu failed %zu messages %llu "
              "total %ld expected %ld %s\n",
              accounts, count, refused, failed,
              static_cast<unsigned long long>(st.messages_sent), total,
              expected, total == expected ? "conserved" : "NOT CONSERVED");
  return total == expected && failed == 0 ? 0 : 1;
}
