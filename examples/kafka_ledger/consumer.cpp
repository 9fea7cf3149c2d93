// SPDX-License-Identifier: Apache-2.0
#include "consumer.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <unistd.h>

#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/source.hpp"

namespace kafka_ledger {

namespace {

std::atomic<bool> stop_requested{false};
std::atomic<bool> report_requested{false};

// What a run that did not finish needs to be understood: where this
// consumer's records stopped (read, taken, held back, finished) and what
// its runtime still holds.
void report(keylane::kafka::source& src) {
  auto s = src.stats();
  auto r = src.lanes().stats();
  std::fprintf(stderr,
               "consumer pid %d: consumed %llu, submitted %llu, finished %llu "
               "(%llu late), refused %llu, pauses %llu, resumes %llu, "
               "assigned %llu, revoked %llu (%llu timed out), dropped on "
               "revoke %llu, commits %llu (%llu failed), lag %llu; runtime: "
               "accepted %llu, delivered %llu, active lanes %llu, waiting "
               "keys %llu, sink buffered %llu, ingress %llu\n",
               static_cast<int>(::getpid()),
               static_cast<unsigned long long>(s.consumed),
               static_cast<unsigned long long>(s.submitted),
               static_cast<unsigned long long>(s.finished),
               static_cast<unsigned long long>(s.finished_late),
               static_cast<unsigned long long>(s.refused),
               static_cast<unsigned long long>(s.pauses),
               static_cast<unsigned long long>(s.resumes),
               static_cast<unsigned long long>(s.assigned),
               static_cast<unsigned long long>(s.revoked),
               static_cast<unsigned long long>(s.revoke_timeouts),
               static_cast<unsigned long long>(s.dropped_on_revoke),
               static_cast<unsigned long long>(s.commits),
               static_cast<unsigned long long>(s.commit_failures),
               static_cast<unsigned long long>(s.lag),
               static_cast<unsigned long long>(r.accepted),
               static_cast<unsigned long long>(r.delivered),
               static_cast<unsigned long long>(r.active_lanes),
               static_cast<unsigned long long>(r.waiting_keys),
               static_cast<unsigned long long>(r.sink_buffered),
               static_cast<unsigned long long>(r.ingress_depth));
}

// Value "<n>:<amount>": the account's n-th event and what it adds.
std::pair<long, long> parse_value(const std::string& v) {
  auto i = v.find(':');
  if (i == std::string::npos)
    return {-1, 0};
  return {std::stol(v.substr(0, i)), std::stol(v.substr(i + 1))};
}

// One instance per active account: its balance, written after a simulated
// asynchronous database round trip.
struct balance : keylane::handler<keylane::kafka::record, std::string> {
  explicit balance(const keylane::handler_params& p)
    : max_ms(p.get_int("max_delay_ms", 0)), rng(std::random_device{}()) {}
  int64_t max_ms;
  std::minstd_rand rng;
  long total = 0;
  void on_event(keylane::kafka::record& r,
                keylane::completion<std::string> done) override {
    total += parse_value(r.value).second;
    auto ms = std::uniform_int_distribution<int64_t>{0, max_ms}(rng);
    run_later(std::chrono::milliseconds(ms),
              [d = std::make_shared<keylane::completion<std::string>>(
                 std::move(done)),
               t = total]() mutable { d->ok(std::to_string(t)); });
  }
};

} // namespace

int run_consumer(const std::string& config, const std::string& bootstrap,
                 const std::vector<std::string>& sets) {
  auto cfg = keylane::kafka::load(config);
  if (cfg)
    if (auto err = keylane::kafka::apply_overrides(*cfg, sets))
      cfg = std::move(err);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", keylane::render(cfg.error()).c_str());
    return 2;
  }
  if (!bootstrap.empty())
    cfg->source.bootstrap_servers = bootstrap;
  std::signal(SIGTERM, [](int) { stop_requested = true; });
  std::signal(SIGUSR1, [](int) { report_requested = true; });
  keylane::handler_registry reg;
  reg.add<balance>("balance");
  auto src = keylane::kafka::source::start(
    std::move(*cfg), reg, [](keylane::kafka::record_event& ev) {
      const auto& r = ev.payload;
      auto line = "F " + std::to_string(r.partition) + ' '
                  + std::to_string(r.offset) + ' ' + r.key + ' '
                  + std::to_string(parse_value(r.value).first) + ' '
                  + std::to_string(r.assignment) + '\n';
      // One write per line: a killed consumer leaves whole lines only.
      auto rc = ::write(1, line.data(), line.size());
      (void) rc;
    });
  if (!src) {
    std::fprintf(stderr, "%s\n", keylane::render(src.error()).c_str());
    return 2;
  }
  while (!stop_requested) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (report_requested.exchange(false))
      report(**src);
  }
  (*src)->stop();
  return 0;
}

} // namespace kafka_ledger
