// SPDX-License-Identifier: Apache-2.0
// The kill -9 drill: a runtime keeping state in RocksDB is killed at random
// moments, several times on one directory. After each kill every key's
// stored state must be the fold of a prefix of its events — never torn,
// mixed or out of order — and the next run goes on from it.

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include <unistd.h>

#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"

#include "child_process.hpp"
#include "state_support.hpp"

using namespace state_test;
using test_support::child_pipe;
using test_support::child_process;
using test_support::child_spec;
namespace kl = keylane;

namespace {

using crash_rt = kl::runtime<uint64_t, uint64_t>;

constexpr const char* crash_env = "KEYLANE_STATE_CRASH_CHILD";
constexpr uint64_t crash_keys = 61;
constexpr uint64_t round_span = 1'000'000'000; // round r's values start here

/// The value of key k's j-th event in round r.
uint64_t value_of(uint64_t round, uint64_t k, uint64_t j) {
  return round * round_span + k + j * crash_keys;
}

} // namespace

// Run by the drill below in a process of its own; nothing otherwise.
TEST_CASE("(the child process of the keyed-state kill -9 drill)",
          "[.state_crash_child]") {
  int fd = -1;
  uint64_t round = 0, ckpt_ms = 0, ckpt_events = 0, linger = 0;
  std::string path;
  if (!child_spec(crash_env, fd, round, ckpt_ms, ckpt_events, linger, path))
    return;
  kl::settings s;
  s.max_attempts = 1; // the default before 0.2.0
  s.threads = 2;
  s.order = kl::order_mode::none;
  s.state_store = kl::state_backend::rocksdb;
  s.state_path = path;
  s.state_checkpoint_ms = ckpt_ms;
  s.state_checkpoint_events = ckpt_events;
  s.lane_linger_ms = linger;
  s.max_active_keys = 16; // below the keys: lanes retire and come back
  uint64_t outputs = 0;
  auto on_output = [fd, &outputs](crash_rt::event_type& ev) {
    if (ev.status != kl::outcome::ok)
      _exit(4);
    if (++outputs % 64 == 0 && write(fd, &outputs, sizeof(outputs)) < 0)
      _exit(5);
  };
  kl::handler_factory make = [](const kl::handler_params&) {
    return std::make_unique<folding>();
  };
  auto rt = crash_rt::start(s, make, on_output);
  if (!rt)
    _exit(6);
  for (uint64_t j = 0; j < 10'000'000; ++j)
    for (uint64_t k = 0; k < crash_keys; ++k) {
      auto a = j % 3 == 0 ? act::later : act::now;
      if (!(*rt)->submit(kl::key{k}, make_value(value_of(round, k, j), a)))
        _exit(7);
    }
  pause();
  _exit(8);
}

TEST_CASE("a runtime killed with kill -9 leaves every key's state as the fold "
          "of a prefix of its events, and the next run goes on from it",
          "[state][durable][crash]") {
  auto base = seed();
  INFO("seed " << base << " (rerun with KEYLANE_SEED=" << base << ")");
  std::mt19937_64 rng{base};
  temp_dir dir;
  auto path = (dir.path / "state").string();
  // Per key: how many events of each round its stored state holds.
  std::map<uint64_t, std::vector<uint64_t>> held;
  const uint64_t rounds = 3;
  uint64_t progressed = 0; // rounds that stored something new
  for (uint64_t round = 0; round < rounds; ++round) {
    INFO("round " << round);
    auto ckpt_ms = 1 + rng() % 30;
    auto ckpt_events = rng() % 3 == 0 ? 1 + rng() % 50 : 0;
    auto linger = rng() % 3;
    INFO("checkpoint " << ckpt_ms << " ms / " << ckpt_events
                       << " events, linger " << linger << " ms");
    child_pipe progress;
    auto spec = std::to_string(progress.write_fd()) + " "
                + std::to_string(round) + " " + std::to_string(ckpt_ms) + " "
                + std::to_string(ckpt_events) + " " + std::to_string(linger)
                + " " + path;
    auto child = child_process::test_case("[.state_crash_child]", crash_env,
                                          spec, {progress.read_fd()});
    REQUIRE(child.started());
    progress.close_write();
    auto kill_after = 500 + rng() % 20'000;
    uint64_t seen = 0;
    while (seen < kill_after
           && progress.read_records<uint64_t>(60'000,
                                              [&](uint64_t n) { seen = n; })) {
    }
    // Any moment: mid-batch, mid-fsync, between checkpoints.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
    child.kill_and_reap();
    progress.close_read();
    CHECK(seen >= kill_after);

    auto store = kl::open_rocksdb_state_store(path, true);
    INFO((store ? std::string{} : kl::render(store.error())));
    REQUIRE(store);
    bool grew = false;
    for (uint64_t k = 0; k < crash_keys; ++k) {
      INFO("key " << k);
      auto& h = held[k];
      h.resize(round + 1, 0);
      auto got = (*store)->read(kl::key{k});
      REQUIRE(got);
      uint64_t before = 0;
      for (uint64_t r = 0; r < round; ++r)
        before += h[r];
      if (!*got) {
        CHECK(before == 0); // a key never loses a written state
        continue;
      }
      auto rec = kl::detail::decode_state_record(**got);
      REQUIRE(rec);
      // The earlier rounds' prefixes stay; this round adds a prefix of its own.
      REQUIRE(rec->events >= before);
      h[round] = rec->events - before;
      grew = grew || h[round] > 0;
      fold expect;
      for (uint64_t r = 0; r <= round; ++r)
        for (uint64_t j = 0; j < h[r]; ++j)
          expect.apply(make_value(value_of(r, k, j),
                                  j % 3 == 0 ? act::later : act::now));
      auto f = kl::codec<fold>::decode(rec->state);
      REQUIRE(f);
      CHECK(*f == expect);
    }
    progressed += grew;
  }
  // The drill means something only if the kills found written state.
  CHECK(progressed >= 2);
}
