// SPDX-License-Identifier: Apache-2.0
// A consumer-group member for the Kafka tests: runs a keylane::kafka::source
// from a config file and logs, one line per write to an O_APPEND file, every
// finished record and every accepted commit with a system-wide monotonic
// timestamp, so the test can order lines across processes:
//   F <partition> <offset> <key> <value> <assignment> <ns> <status>
//   C <partition> <offset> <ns>
// SIGTERM leaves the group gracefully, then logs
//   S <finished> <finished late> <refused> <pauses> <revoke timeouts>
//   T <restores> <records restored> <restore bytes> <restore ms>
//     <changelog records> <changelog writes dropped>
// Handlers (config `handler.name`): "slow_echo" answers each record with its
// value; "sum_state" keeps per-key totals of the values in keyed state.
//
//   kafka_member CONFIG LOG [MAX_DELAY_MS]

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/source.hpp"
#include "keylane/stateful_handler.hpp"
#include "state_totals.hpp"

namespace {

std::atomic<bool> stop_requested{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

// One write per line: lines of a process killed mid-run are whole or absent.
void log_line(int fd, const std::string& line) {
  auto rc = ::write(fd, line.data(), line.size());
  (void) rc;
}

// Finishes each record after a random asynchronous delay, so events are in
// flight whenever the test kills or rebalances the member.
struct slow_echo : keylane::handler<keylane::kafka::record, std::string> {
  explicit slow_echo(const keylane::handler_params& p)
    : max_ms(p.get_int("max_delay_ms", 0)),
      rng(std::random_device{}()) {}
  int64_t max_ms;
  std::minstd_rand rng;
  void on_event(keylane::kafka::record& r,
                keylane::completion<std::string> done) override {
    if (max_ms <= 0)
      return done.ok(r.value);
    auto ms = std::uniform_int_distribution<int64_t>{0, max_ms}(rng);
    run_later(std::chrono::milliseconds(ms),
              [d = std::make_shared<keylane::completion<std::string>>(
                 std::move(done)),
               v = r.value]() mutable { d->ok(v); });
  }
};

// Adds each record's value (an integer) to its key's totals in keyed state,
// after a random asynchronous delay like slow_echo's, so a kill finds events
// in flight, checkpoints taken while an event runs and unwritten state.
// Deterministic in its state: what it adds depends on the record only.
struct sum_state
  : keylane::stateful_handler<keylane::kafka::record, std::string,
                              kafka_test::totals> {
  explicit sum_state(const keylane::handler_params& p)
    : max_ms(p.get_int("max_delay_ms", 0)),
      rng(std::random_device{}()) {}
  int64_t max_ms;
  std::minstd_rand rng;

  std::string apply(int64_t value) {
    state().sum += value;
    state().count += 1;
    return std::to_string(state().sum);
  }

  void on_event(keylane::kafka::record& r,
                keylane::completion<std::string> done) override {
    auto value = std::stoll(r.value);
    if (max_ms <= 0)
      return done.ok(apply(value));
    auto ms = std::uniform_int_distribution<int64_t>{0, max_ms}(rng);
    // The timer runs on the lane before the completion: the change
    // belongs to this event.
    run_later(std::chrono::milliseconds(ms),
              [this, value,
               d = std::make_shared<keylane::completion<std::string>>(
                 std::move(done))]() mutable { d->ok(apply(value)); });
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kafka_member CONFIG LOG\n");
    return 2;
  }
  auto cfg = keylane::kafka::load(argv[1]);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", keylane::render(cfg.error()).c_str());
    return 2;
  }
  int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    return 2;
  std::signal(SIGTERM, [](int) { stop_requested = true; });
  keylane::handler_registry reg;
  reg.add<slow_echo>("slow_echo");
  reg.add<sum_state>("sum_state");
  auto src = keylane::kafka::source::start(
    std::move(*cfg), reg,
    [fd](keylane::kafka::record_event& ev) {
      const auto& r = ev.payload;
      log_line(fd, "F " + std::to_string(r.partition) + ' '
                     + std::to_string(r.offset) + ' ' + r.key + ' ' + r.value
                     + ' ' + std::to_string(r.assignment) + ' '
                     + std::to_string(now_ns()) + ' '
                     + keylane::to_string(ev.status) + '\n');
    },
    [fd](const std::string&, int32_t partition, int64_t offset) {
      log_line(fd, "C " + std::to_string(partition) + ' '
                     + std::to_string(offset) + ' ' + std::to_string(now_ns())
                     + '\n');
    });
  if (!src) {
    std::fprintf(stderr, "%s\n", keylane::render(src.error()).c_str());
    return 2;
  }
  log_line(fd, "R " + std::to_string(::getpid()) + '\n');
  // The signal handler only sets a flag; the stop itself runs here.
  while (!stop_requested)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  (*src)->stop();
  auto st = (*src)->stats();
  log_line(fd, "S " + std::to_string(st.finished) + ' '
                 + std::to_string(st.finished_late) + ' '
                 + std::to_string(st.refused) + ' '
                 + std::to_string(st.pauses) + ' '
                 + std::to_string(st.revoke_timeouts) + '\n');
  log_line(fd, "T " + std::to_string(st.restores) + ' '
                 + std::to_string(st.records_restored) + ' '
                 + std::to_string(st.restore_bytes) + ' '
                 + std::to_string(st.restore_ms) + ' '
                 + std::to_string(st.changelog_records) + ' '
                 + std::to_string(st.changelog_dropped) + '\n');
  ::close(fd);
  return 0;
}
