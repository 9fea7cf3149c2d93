// SPDX-License-Identifier: Apache-2.0
// A source with `kafka.changelog_topic` restores its partitions' keys from
// the changelog before their events run: 100,000 keys written to the
// changelog beforehand, records for a few of them waiting in the input
// topic; each must run on its key's restored state. Prints how long the
// restore took and how many bytes it read.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "keylane/codec.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "keylane/stateful_handler.hpp"
#include "member_process.hpp"
#include "rdkafka.hpp" // keylane::kafka's librdkafka owners (private)
#include "state_totals.hpp"

using namespace std::chrono_literals;
namespace kk = keylane::kafka;
using kafka_test::totals;
using kafka_test::wait_until;

namespace {

struct summing
  : keylane::stateful_handler<kk::record, std::string, totals> {
  void on_event(kk::record& r,
                keylane::completion<std::string> done) override {
    state().sum += std::stoll(r.value);
    state().count += 1;
    done.ok(std::to_string(state().sum) + '/' + std::to_string(state().count));
  }
};

std::string config_text(const std::string& bootstrap,
                        const std::string& store = "memory",
                        const std::string& path = "") {
  return "[runtime]\norder = \"none\"\n\n[scheduler]\nthreads = 2\n\n"
         "[handler]\nname = \"summing\"\n\n[state]\nstore = \"" + store
         + "\"\n" + (path.empty() ? "" : "path = \"" + path + "\"\n") + "\n"
         "[kafka]\nbootstrap_servers = \"" + bootstrap + "\"\n"
         "group = \"restore-test\"\ntopics = [\"in\"]\n"
         "commit_interval_ms = 50\nchangelog_topic = \"in-state\"\n\n"
         "[kafka.properties]\n\"session.timeout.ms\" = 3000\n"
         "\"heartbeat.interval.ms\" = 300\n\"log_level\" = 2\n";
}

} // namespace

TEST_CASE("a source restores 100,000 keys from the changelog before its "
          "partitions' events run, and each key goes on from its restored "
          "state",
          "[kafka][changelog][restore]") {
  constexpr int keys = 100000, parts = 3;
  // Into memory, and into a RocksDB directory (the local cache).
  auto store = GENERATE(std::string{"memory"}, std::string{"rocksdb"});
  auto dir = std::filesystem::temp_directory_path()
             / ("keylane-restore-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  auto& cluster = **mc;
  REQUIRE(!cluster.create_topic("in", parts));
  REQUIRE(!cluster.create_topic("in-state", parts));
  auto prod = kk::producer::start(cluster.bootstrap_servers());
  REQUIRE(prod);
  // Key k<i> lives in partition i % 3 of both topics, with sum i and one
  // event applied.
  uint64_t bytes = 0;
  for (int i = 0; i < keys; ++i) {
    keylane::detail::state_record rec;
    rec.events = 1;
    auto enc = keylane::codec<totals>::encode(totals{i, 1});
    REQUIRE(enc);
    rec.state = std::move(*enc);
    auto key = "k" + std::to_string(i);
    auto value = keylane::detail::encode_state_record(rec);
    bytes += key.size() + value.size();
    REQUIRE(!(*prod)->produce("in-state", key, value, {}, i % parts));
  }
  std::vector<int> probes{0, 7, 4242, 50001, keys - 1};
  for (int i : probes)
    REQUIRE(!(*prod)->produce("in", "k" + std::to_string(i), "5", {},
                              i % parts));
  REQUIRE(!(*prod)->flush(60s));

  auto cfg = kk::parse(config_text(cluster.bootstrap_servers(), store,
                                   store == "rocksdb" ? dir.string() : ""),
                       "r.toml");
  REQUIRE(cfg);
  keylane::handler_registry reg;
  reg.add<summing>("summing");
  std::mutex mu;
  std::map<std::string, std::string> results;
  auto t0 = std::chrono::steady_clock::now();
  auto src = kk::source::start(std::move(*cfg), reg,
                               [&](kk::record_event& ev) {
                                 std::lock_guard<std::mutex> guard{mu};
                                 results[ev.payload.key] =
                                   ev.result ? *ev.result : "(none)";
                               });
  REQUIRE(src);
  REQUIRE(wait_until(
    [&] {
      std::lock_guard<std::mutex> guard{mu};
      return results.size() == probes.size();
    },
    120s));
  auto wall = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                            - t0)
                .count();
  (*src)->stop();
  auto st = (*src)->stats();
  for (int i : probes) {
    auto k = "k" + std::to_string(i);
    INFO(k);
    CHECK(results[k] == std::to_string(i + 5) + "/2");
  }
  CHECK(st.restores == parts);
  CHECK(st.records_restored == keys);
  CHECK(st.restore_bytes == bytes);
  CHECK(st.restore_failures == 0);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove(dir.string() + ".changelog", ec);
  std::printf("restore into %s: %llu records, %llu bytes in %.3f s (%d "
              "partitions, one after another); the probes' outputs %.3f s "
              "after the start, the group join included\n",
              store.c_str(),
              static_cast<unsigned long long>(st.records_restored),
              static_cast<unsigned long long>(st.restore_bytes),
              static_cast<double>(st.restore_ms) / 1000.0, parts, wall);
}

TEST_CASE("a source whose changelog topic does not exist refuses to start "
          "and names it",
          "[kafka][changelog]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  REQUIRE(!(*mc)->create_topic("in", 3));
  auto cfg = kk::parse(config_text((*mc)->bootstrap_servers()), "r.toml");
  REQUIRE(cfg);
  keylane::handler_registry reg;
  reg.add<summing>("summing");
  auto src = kk::source::start(std::move(*cfg), reg);
  REQUIRE(!src);
  auto m = keylane::render(src.error());
  INFO(m);
  CHECK(m.find("kafka.changelog_topic \"in-state\"") != std::string::npos);
  CHECK(m.find("create it, compacted") != std::string::npos);
}

#ifdef KEYLANE_STATE_TOOL
TEST_CASE("keylane-state lists, shows and exports the states of a changelog "
          "topic: each key's last record, deleted keys left out",
          "[kafka][changelog][tool]") {
  auto mc = kk::mock_cluster::start(1);
  REQUIRE(mc);
  REQUIRE(!(*mc)->create_topic("app-state", 2));
  auto prod = kk::producer::start((*mc)->bootstrap_servers());
  REQUIRE(prod);
  auto record = [](int64_t sum, uint64_t events) {
    keylane::detail::state_record rec;
    rec.events = events;
    rec.origins = {{"in/1", static_cast<int64_t>(events) - 1}};
    auto enc = keylane::codec<totals>::encode(totals{sum, 1});
    REQUIRE(enc);
    rec.state = std::move(*enc);
    return keylane::detail::encode_state_record(rec);
  };
  REQUIRE(!(*prod)->produce("app-state", "alice", record(10, 1), {}, 0));
  REQUIRE(!(*prod)->produce("app-state", "bob", record(5, 1), {}, 1));
  REQUIRE(!(*prod)->produce("app-state", "alice", record(30, 7), {}, 0));
  REQUIRE(!(*prod)->produce("app-state", "carol", record(1, 1), {}, 1));
  REQUIRE(!(*prod)->flush(30s));
  // carol deleted: a null value, as keylane's erase writes it.
  namespace rdk = keylane::kafka::rdkafka;
  auto conf = rdk::new_conf();
  (void) rdk::set(*conf, "bootstrap.servers", (*mc)->bootstrap_servers());
  std::string why;
  auto rk = rdk::new_client(RD_KAFKA_PRODUCER, std::move(conf), why);
  REQUIRE(rk);
  REQUIRE(rd_kafka_producev(rk.get(), RD_KAFKA_V_TOPIC("app-state"),
                            RD_KAFKA_V_PARTITION(1),
                            RD_KAFKA_V_KEY("carol", 5), RD_KAFKA_V_END)
          == RD_KAFKA_RESP_ERR_NO_ERROR);
  REQUIRE(rd_kafka_flush(rk.get(), 30000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rk.reset();

  auto target = "kafka:" + (*mc)->bootstrap_servers() + "/app-state";
  auto out = std::filesystem::temp_directory_path()
             / ("keylane-state-" + std::to_string(::getpid()) + ".txt");
  auto run = [&](const std::string& args) {
    auto cmd = std::string{KEYLANE_STATE_TOOL} + " " + args + " > "
               + out.string() + " 2>&1";
    auto rc = std::system(cmd.c_str());
    std::ifstream in{out};
    std::string text{std::istreambuf_iterator<char>{in},
                     std::istreambuf_iterator<char>{}};
    INFO(cmd << "\n" << text);
    return std::pair{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text};
  };
  auto [rc, list] = run("list " + target);
  INFO(list);
  CHECK(rc == 0);
  CHECK(list.find("alice") != std::string::npos);
  CHECK(list.find("bob") != std::string::npos);
  CHECK(list.find("carol") == std::string::npos);
  auto [rc2, show] = run("show " + target + " alice");
  INFO(show);
  CHECK(rc2 == 0);
  CHECK(show.find("\"events\":7") != std::string::npos);
  CHECK(show.find("\"in/1\":6") != std::string::npos);
  auto [rc3, gone] = run("erase " + target + " alice");
  CHECK(rc3 == 2);
  CHECK(gone.find("not on a changelog topic") != std::string::npos);
  std::filesystem::remove(out);
}
#endif
