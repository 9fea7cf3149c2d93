// SPDX-License-Identifier: Apache-2.0
// doc:begin README.md
#include <chrono>
#include <cstdio>
#include <thread>
#include <keylane/config_loader.hpp>
#include <keylane/runtime.hpp>
#include <keylane/stateful_handler.hpp>

struct account { long total = 0; }; // written through CAF's inspect:
template <class F> auto inspect(F& f, account& x) { return f(x.total); }

// One handler instance per *active* key; state() outlives it ([state] store).
struct balance : keylane::stateful_handler<long, long, account> {
  void on_event(long& amount, keylane::completion<long> done) override {
    state().total += amount;
    done.ok(state().total); // or later: a timer, a response, another thread
  }
};

int main(int argc, char** argv) {
  keylane::handler_registry handlers;
  handlers.add<balance>("balance");
  auto cfg = keylane::load(argc > 1 ? argv[1] : "app.toml");
  if (!cfg) return puts(keylane::render(cfg.error()).c_str()), 2;
  if (argc > 2 && argv[2] == std::string{"--print-config"}) // as it runs
    return puts(keylane::to_toml(*cfg).c_str()), 0; // the settings, as TOML
  auto rt = keylane::runtime<long, long>::start(*cfg, handlers,
    [](keylane::event<long, long>& e) { // one call at a time
      printf("%s %ld\n", e.key().to_string().c_str(), e.result.value_or(0));
    });
  if (!rt) return puts(keylane::render(rt.error()).c_str()), 2;
  auto& run = **rt;
  for (long amount : {100L, 200L})
    if (auto r = run.submit("acct-7", amount); !r) // from any thread
      return puts(keylane::to_string(r.code())), 1; // e.g. window_full
  if (!run.drain()) return 1; // every accepted event came out
  while (run.stats().active_lanes != 0) // idle past lane_linger_ms: retired
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (void)run.submit("acct-7", -50L); // a new lane; its state() holds 300
  return run.drain() ? 0 : 1; // the destructor stops the runtime
}
// doc:end
