// SPDX-License-Identifier: Apache-2.0
// balances: keyed state that survives a restart. Each ACCOUNT=AMOUNT
// argument is an event of ACCOUNT; the account's handler keeps its balance
// in keylane's keyed state, in a RocksDB directory, so a second run goes on
// from where the first one stopped (or was killed).
//
//   balances --state DIR alice=+100 bob=+20 alice=-30
//
// prints each event's balance in order per account, then the final ones.

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <keylane/runtime.hpp>
#include <keylane/stateful_handler.hpp>

#include <command_line.hpp>

struct account {
  long balance = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account& x) {
  return f(caf::meta::type_name("account"), x.balance);
}

// One instance per active account; `state()` is loaded before its first
// event and written back by keylane (checkpoints, retire, stop).
struct balances : keylane::stateful_handler<long, long, account> {
  void on_event(long& amount, keylane::completion<long> done) override {
    if (state().balance + amount < 0)
      return done.fail_permanently("insufficient funds"); // not retried
    state().balance += amount;
    done.ok(state().balance);
  }
};

int main(int argc, char** argv) {
  std::string dir;
  std::vector<std::string> args;
  keylane::cli::command_line cl{
    "balances", "usage: balances --state DIR ACCOUNT=AMOUNT...\n"};
  cl.text("--state", dir)->required();
  cl.app().add_option("events", args);
  cl.parse(argc, argv);
  std::vector<std::pair<std::string, long>> events;
  for (auto& arg : args) {
    auto eq = arg.find('=');
    char* end = nullptr;
    long amount = eq == std::string::npos
                    ? 0 : std::strtol(arg.c_str() + eq + 1, &end, 10);
    if (eq == 0 || eq == std::string::npos || end == nullptr || *end != '\0') {
      std::fprintf(stderr, "balances: '%s' is not ACCOUNT=AMOUNT\n",
                   arg.c_str());
      return 2;
    }
    events.emplace_back(arg.substr(0, eq), amount);
  }
  keylane::settings cfg;
  cfg.order = keylane::order_mode::global;
  cfg.park = keylane::park_mode::none; // a refused event ends as failed
  cfg.state_store = keylane::state_backend::rocksdb;
  cfg.state_path = dir;
  std::mutex mtx;
  std::map<std::string, long> last;
  auto rt = keylane::runtime<long, long>::start(
    cfg, [](const keylane::handler_params&) {
      return std::make_unique<balances>();
    },
    [&](keylane::event<long, long>& e) {
      auto acct = e.key().to_string();
      if (e.status != keylane::outcome::ok) {
        std::printf("%s %+ld refused: %s\n", acct.c_str(), e.payload,
                    e.error.c_str());
        return;
      }
      std::printf("%s %+ld -> %ld\n", acct.c_str(), e.payload, *e.result);
      std::lock_guard<std::mutex> guard{mtx};
      last[acct] = *e.result;
    });
  if (!rt) {
    std::fprintf(stderr, "balances: %s\n", keylane::render(rt.error()).c_str());
    return 1;
  }
  for (auto& [acct, amount] : events)
    if (auto r = (*rt)->submit(acct, long{amount}); !r) {
      std::fprintf(stderr, "balances: %s\n", keylane::to_string(r.code()));
      return 1;
    }
  if (!(*rt)->drain())
    return 1;
  (*rt)->stop(); // writes every account's state before it returns
  for (auto& [acct, balance] : last)
    std::printf("final %s %ld\n", acct.c_str(), balance);
}
