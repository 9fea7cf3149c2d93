// SPDX-License-Identifier: Apache-2.0
// A revoke that stops waiting for a slow event (`revoke_timeout_ms`) leaves
// that event running in its lane, with its key's state in memory. If the
// partition moves to another member, which changes the key, and then comes
// back while the event still runs, the first member must not go on from
// (or write) the state its lane held: its restore waits for the event.

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "keylane/stateful_handler.hpp"
#include "member_process.hpp"
#include "state_totals.hpp"

using namespace std::chrono_literals;
namespace kk = keylane::kafka;
using kafka_test::totals;
using kafka_test::wait_until;

namespace {

/// Sums its key's values and answers "<value>:<sum>/<count>"; on member A
/// (`slow`), the first record of each key with value "1" takes 8 s
/// (through run_later, holding no thread).
struct slow_summing
  : keylane::stateful_handler<kk::record, std::string, totals> {
  slow_summing(bool slow, std::shared_ptr<std::mutex> mu,
               std::shared_ptr<std::set<std::string>> slowed)
    : slow_(slow), mu_(std::move(mu)), slowed_(std::move(slowed)) {}

  void on_event(kk::record& r,
                keylane::completion<std::string> done) override {
    bool wait = false;
    if (slow_ && r.value == "1") {
      std::lock_guard<std::mutex> guard{*mu_};
      wait = slowed_->insert(r.key).second;
    }
    auto value = std::stoll(r.value);
    if (!wait)
      return apply(value, std::move(done));
    run_later(8s, [this, value,
                   d = std::make_shared<keylane::completion<std::string>>(
                     std::move(done))]() mutable { apply(value, std::move(*d)); });
  }

  void apply(int64_t value, keylane::completion<std::string> done) {
    state().sum += value;
    state().count += 1;
    done.ok(std::to_string(value) + ':' + std::to_string(state().sum) + '/'
            + std::to_string(state().count));
  }

  bool slow_;
  std::shared_ptr<std::mutex> mu_;
  std::shared_ptr<std::set<std::string>> slowed_;
};

std::string config_text(const std::string& bootstrap) {
  return "[runtime]\norder = \"none\"\n\n[scheduler]\nthreads = 2\n\n"
         "[handler]\nname = \"slow_summing\"\n\n[state]\nstore = \"memory\"\n"
         "checkpoint_ms = 20\n\n"
         "[kafka]\nbootstrap_servers = \"" + bootstrap + "\"\n"
         "group = \"straggler-test\"\ntopics = [\"in\"]\n"
         "commit_interval_ms = 50\nrevoke_timeout_ms = 300\n"
         "changelog_topic = \"in-state\"\n\n"
         "[kafka.properties]\n\"session.timeout.ms\" = 3000\n"
         "\"heartbeat.interval.ms\" = 300\n\"fetch.wait.max.ms\" = 10\n"
         "\"log_level\" = 2\n";
}

/// One member: its source and its last answer per key.
struct member {
  std::mutex mu;
  std::map<std::string, std::string> last;
  std::unique_ptr<kk::source> src;

  std::string last_of(const std::string& k) {
    std::lock_guard<std::mutex> guard{mu};
    return last[k];
  }
};

/// Partitions assigned to `m` now.
uint64_t owned(member& m) {
  auto st = m.src->stats();
  return st.assigned - st.revoked;
}

void start(member& m, const std::string& bootstrap, bool slow) {
  auto cfg = kk::parse(config_text(bootstrap), slow ? "a.toml" : "b.toml");
  REQUIRE(cfg);
  auto mu = std::make_shared<std::mutex>();
  auto slowed = std::make_shared<std::set<std::string>>();
  auto src = kk::source::start(
    std::move(*cfg),
    [slow, mu, slowed](const keylane::handler_params&) {
      return std::make_unique<slow_summing>(slow, mu, slowed);
    },
    [&m](kk::record_event& ev) {
      std::lock_guard<std::mutex> guard{m.mu};
      m.last[ev.payload.key] = ev.result ? *ev.result : "(" + ev.error + ")";
    });
  REQUIRE(src);
  m.src = std::move(*src);
}

} // namespace

TEST_CASE("a partition that comes back while an event of its revoked "
          "assignment still runs restores the state another member made "
          "meanwhile, after that event",
          "[kafka][changelog][straggler]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", 2));
  REQUIRE(!cluster.create_topic("in-state", 2));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  auto send = [&](int n) {
    for (int part = 0; part < 2; ++part)
      REQUIRE(!(*prod)->produce("in", "k" + std::to_string(part),
                                std::to_string(n), {}, part));
    REQUIRE(!(*prod)->flush(10s));
  };

  // A owns both partitions and starts the slow first record of each key.
  member a, b;
  start(a, cluster.bootstrap_servers(), true);
  REQUIRE(wait_until([&] { return owned(a) == 2; }, 30s));
  send(1);
  REQUIRE(wait_until([&] { return a.src->stats().submitted == 2; }, 30s));

  // B joins: A's revoke gives up on them, and one partition goes to B,
  // which runs that key's records 1, 2 and 3 and writes its state. Records
  // 2 and 3 come after the rebalance, so A's slow lanes never see them.
  start(b, cluster.bootstrap_servers(), false);
  REQUIRE(wait_until(
    [&] { return owned(b) == 1 && owned(a) == 1; }, 30s));
  send(2);
  send(3);
  std::string moved;
  REQUIRE(wait_until(
    [&] {
      for (auto k : {"k0", "k1"})
        if (b.last_of(k) == "3:6/3")
          moved = k;
      return !moved.empty();
    },
    30s));
  CHECK(a.src->stats().revoke_timeouts > 0);

  // B leaves: the partition comes back to A while A's slow event of that
  // key still runs.
  b.src->stop();
  REQUIRE(wait_until([&] { return owned(a) == 2; }, 30s));
  send(4);
  // Each key's record 4 runs on the state of 1 + 2 + 3, each applied once:
  // without the wait, the key that moved went on from what A's slow lane
  // held (record 1 alone), wrote it over B's, and answered "4:5/2".
  REQUIRE(wait_until(
    [&] {
      return a.last_of("k0").rfind("4:", 0) == 0
             && a.last_of("k1").rfind("4:", 0) == 0;
    },
    30s));
  INFO("the key that moved to B and back: " << moved);
  CHECK(a.last_of("k0") == "4:10/4");
  CHECK(a.last_of("k1") == "4:10/4");
  a.src->stop();
}
