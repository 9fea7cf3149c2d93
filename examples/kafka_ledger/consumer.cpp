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
  while (!stop_requested)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  (*src)->stop();
  return 0;
}

} // namespace kafka_ledger
