#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <keylane/config_loader.hpp>
#include <keylane/runtime.hpp>

std::mutex db_mtx; // stands in for your database: lanes run on many threads
std::map<std::string, long> db;

// One instance per *active* key. Members live only as long as the key's
// lane: after `lane_linger_ms` without events the lane retires and the
// instance is destroyed, so load what must last on activate, save on retire.
struct balance : keylane::handler<long, long> {
  long total = 0;
  void on_activate(const keylane::key& k) override {
    std::lock_guard<std::mutex> guard{db_mtx};
    total = db[k.to_string()];
  }
  void on_retire(const keylane::key& k) override {
    std::lock_guard<std::mutex> guard{db_mtx};
    db[k.to_string()] = total;
  }
  void on_event(long& amount, keylane::completion<long> done) override {
    total += amount;
    // Finish now (done.ok(total)) or later: a timer, a response, a thread.
    run_later(std::chrono::milliseconds(1),
              [done = std::move(done), t = total]() mutable { done.ok(t); });
  }
};

int main(int argc, char** argv) {
  keylane::handler_registry handlers;
  handlers.add<balance>("balance");
  auto cfg = keylane::load(argc > 1 ? argv[1] : "app.toml"); // [handler] name = "balance"
  if (!cfg) return puts(keylane::render(cfg.error()).c_str()), 2;
  auto rt = keylane::runtime<long, long>::start(*cfg, handlers,
    [](keylane::event<long, long>& e) { // one consumer thread, output order
      printf("%s %ld\n", e.key().to_string().c_str(), e.result.value_or(0));
    });
  if (!rt) return puts(keylane::render(rt.error()).c_str()), 2;
  auto& run = **rt;
  for (long amount : {100L, 200L})
    if (auto r = run.submit("acct-7", amount); !r) // any thread
      return puts(keylane::to_string(r.code())), 1; // e.g. window_full
  if (!run.drain()) return 1; // every accepted event came out
  while (run.stats().active_lanes != 0) // idle past lane_linger_ms: retired
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (void)run.submit("acct-7", -50L); // a new lane: on_activate loads 300
  if (!run.drain()) return 1;
  run.stop();
}
