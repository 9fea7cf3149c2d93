// SPDX-License-Identifier: Apache-2.0
// kafka_ledger: the ledger across processes. One process owns a Kafka
// cluster (librdkafka's in-process mock, a real Kafka protocol endpoint on
// loopback), produces account events to a 6-partition topic, and starts
// consumer processes that each run a keylane runtime in one consumer group.
// It kills one consumer mid-stream (SIGKILL) and shows that its partitions
// move on, only its uncommitted records run again, and nothing is lost.
//
//   kafka_ledger [--consumers N] [--events N] [--accounts N] [--no-kill]
//                [--bootstrap host:port] [--config kafka_ledger.toml]
//                [--set section.key=value]... [--json]      (--help: all)
//
// --bootstrap runs the same program against a real cluster (the topic
// "ledger" must exist there; use a fresh kafka.group per run).

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "consumer.hpp"
#include "keylane/errc.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/kafka/config_loader.hpp"
#include "keylane/kafka/mock_cluster.hpp"
#include "keylane/kafka/producer.hpp"
#include "options.hpp"
#include "tally.hpp"

extern char** environ;

namespace {

using clk = std::chrono::steady_clock;
using kafka_ledger::options;

/// A consumer process whose stdout feeds the tally from a thread.
struct consumer_process {
  pid_t pid = -1;
  std::thread reader;
};

bool spawn_consumer(int who, const options& o, const std::string& self,
                    kafka_ledger::tally& t, consumer_process& out) {
  int fds[2];
  if (::pipe(fds) != 0)
    return false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<std::string> args{self, "--consume", "--config", o.config,
                                "--bootstrap", o.bootstrap};
  for (const auto& set : o.sets) {
    args.push_back("--set");
    args.push_back(set);
  }
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto rc = posix_spawn(&out.pid, self.c_str(), &fa, nullptr, argv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return false;
  }
  out.reader = std::thread{[fd = fds[0], who, &t] {
    std::string buf;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(fd, chunk, sizeof chunk)) > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      size_t at;
      while ((at = buf.find('\n')) != std::string::npos) {
        t.add(who, buf.substr(0, at));
        buf.erase(0, at + 1);
      }
    }
    ::close(fd);
  }};
  return true;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

int main(int argc, char** argv) {
  auto o = kafka_ledger::parse_args(argc, argv);
  if (o.consume)
    return kafka_ledger::run_consumer(o.config, o.bootstrap, o.sets);
  // The consumers read the same file and overrides: refuse bad ones here,
  // before any process starts.
  auto cfg = keylane::kafka::load(o.config);
  if (cfg)
    if (auto err = keylane::kafka::apply_overrides(*cfg, o.sets))
      cfg = std::move(err);
  if (!cfg) {
    std::fprintf(stderr, "kafka_ledger: %s\n",
                 keylane::render(cfg.error()).c_str());
    return 2;
  }
  if (o.print_config) {
    // The [kafka] table has no TOML writer yet: the file and --set say it.
    std::printf("%s# [kafka]: as in %s, with the --set overrides of kafka.*\n",
                keylane::to_toml(cfg->runtime).c_str(), o.config.c_str());
    return 0;
  }
  for (const auto& set : o.sets)
    if (set.rfind("kafka.bootstrap_servers=", 0) == 0 && o.bootstrap.empty())
      o.bootstrap = cfg->source.bootstrap_servers; // a real cluster
  const auto& output_topic = cfg->source.output_topic;
  // With --json the narrative goes to stderr and stdout holds the object.
  std::FILE* info = o.json ? stderr : stdout;

  std::unique_ptr<keylane::kafka::mock_cluster> cluster;
  if (o.bootstrap.empty()) {
    auto mc = keylane::kafka::mock_cluster::start(3);
    if (!mc || (*mc)->create_topic("ledger", 6)
        || (!output_topic.empty() && (*mc)->create_topic(output_topic, 6))) {
      std::fprintf(stderr, "kafka_ledger: cannot start the mock cluster\n");
      return 1;
    }
    cluster = std::move(*mc);
    o.bootstrap = cluster->bootstrap_servers();
    std::fprintf(info, "cluster: embedded (librdkafka mock, 3 brokers) at %s, "
                "topic ledger with 6 partitions\n", o.bootstrap.c_str());
  } else {
    std::fprintf(info, "cluster: %s, topic ledger\n", o.bootstrap.c_str());
  }
  auto prod = keylane::kafka::producer::start(o.bootstrap);
  if (!prod) {
    std::fprintf(stderr, "kafka_ledger: no producer\n");
    return 1;
  }

  kafka_ledger::tally t;
  std::vector<consumer_process> consumers(o.consumers);
  for (int i = 0; i < o.consumers; ++i)
    if (!spawn_consumer(i, o, "/proc/self/exe", t, consumers[i])) {
      std::fprintf(stderr, "kafka_ledger: cannot start consumer %d\n", i);
      return 1;
    }
  std::fprintf(info, "consumers: %d processes in group kafka-ledger, each a "
              "keylane runtime\n", o.consumers);
  std::fflush(info);

  // Account events: each account's n-th event carries n, so consumers can
  // check their order; amounts are random.
  std::minstd_rand rng{7};
  std::vector<long> next(o.accounts, 0);
  auto produce = [&](int count) {
    for (int i = 0; i < count; ++i) {
      auto a = static_cast<int>(rng() % o.accounts);
      auto key = "acct-" + std::to_string(a);
      auto value = std::to_string(next[a]++) + ":"
                   + std::to_string(static_cast<long>(rng() % 200) - 100);
      if ((*prod)->produce("ledger", key, value))
        return false;
    }
    return !(*prod)->flush(std::chrono::seconds(30));
  };
  // A tenth first, until every consumer works: each join is a rebalance,
  // and the mock refuses commits while one runs (a real broker takes them),
  // which would make the demo redeliver more than it needs to.
  auto start = clk::now();
  int warm = std::max(1, o.events / 10);
  if (!produce(warm)) {
    std::fprintf(stderr, "kafka_ledger: produce failed\n");
    return 1;
  }
  auto until = clk::now() + std::chrono::seconds(30);
  while (t.per_consumer().size() < static_cast<size_t>(o.consumers)
         && clk::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::fprintf(info, "group: %zu of %d consumers working after %.2f s\n",
              t.per_consumer().size(), o.consumers,
              std::chrono::duration<double>(clk::now() - start).count());
  auto steady = clk::now();
  auto before = t.distinct();
  if (!produce(o.events - warm)) {
    std::fprintf(stderr, "kafka_ledger: produce failed\n");
    return 1;
  }
  std::fprintf(info, "produced: %d events over %d accounts\n", o.events,
              o.accounts);
  std::fflush(info);

  auto wait_for = [&](size_t n, std::chrono::seconds limit) {
    auto until = clk::now() + limit;
    while (t.distinct() < n && clk::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return t.distinct() >= n;
  };
  int killed = -1;
  if (o.kill && o.consumers > 1) {
    wait_for(static_cast<size_t>(o.events) / 3, std::chrono::seconds(60));
    killed = o.consumers - 1;
    ::kill(consumers[killed].pid, SIGKILL);
    std::fprintf(info, "killed: consumer %d (SIGKILL) after %zu records finished; "
                "its partitions move after session.timeout.ms\n", killed,
                t.distinct());
    std::fflush(info);
  }
  bool complete = wait_for(static_cast<size_t>(o.events),
                           std::chrono::seconds(120));
  auto took = std::chrono::duration<double>(clk::now() - steady).count();
  if (!complete) {
    // Each live consumer prints its counters on stderr: where its records
    // stopped.
    for (int i = 0; i < o.consumers; ++i)
      if (i != killed) {
        std::fprintf(stderr, "consumer %d is pid %d\n", i,
                     static_cast<int>(consumers[i].pid));
        ::kill(consumers[i].pid, SIGUSR1);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::map<std::string, long> produced;
    for (int a = 0; a < o.accounts; ++a)
      if (next[a] > 0)
        produced["acct-" + std::to_string(a)] = next[a];
    std::fprintf(stderr, "unfinished accounts:\n%s",
                 t.missing(produced).c_str());
  }

  for (int i = 0; i < o.consumers; ++i)
    if (i != killed)
      ::kill(consumers[i].pid, SIGTERM);
  int failures = 0;
  for (int i = 0; i < o.consumers; ++i) {
    auto rc = wait_exit(consumers[i].pid);
    consumers[i].reader.join();
    if (i != killed && rc != 0)
      ++failures;
  }

  auto per = t.per_consumer();
  std::fprintf(info, "finished: %zu of %d events; after the group settled, %zu "
              "in %.2f s (%.0f events/s, the kill and its rebalance "
              "included)\n", t.distinct(), o.events, t.distinct() - before,
              took, (t.distinct() - before) / took);
  for (int i = 0; i < o.consumers; ++i)
    std::fprintf(info, "  consumer %d: %zu records%s\n", i, per[i],
                i == killed ? " (killed)" : "");
  std::fprintf(info, "accounting: %d produced, %zu finished, %zu lost, %zu run "
              "twice (uncommitted when their consumer died or a partition "
              "moved)\n", o.events, t.distinct(), o.events - t.distinct(),
              t.lines() - t.distinct());
  std::fprintf(info, "per-key order: %zu violations\n", t.order_violations());
  bool good = complete && t.order_violations() == 0 && failures == 0;
  std::fprintf(info, "%s\n", good ? "ok: nothing lost, every account in order"
                           : "FAILED");
  if (o.json) {
    std::string per_json;
    for (int i = 0; i < o.consumers; ++i)
      per_json += (i ? ", " : "") + std::to_string(per[i]);
    std::string sets_json;
    for (const auto& set : o.sets) {
      std::string q;
      for (char c : set)
        q += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string{c};
      sets_json += (sets_json.empty() ? "\"" : ", \"") + q + '"';
    }
    std::printf(
      "{\"example\": \"kafka_ledger\", \"cluster\": \"%s\", "
      "\"consumers\": %d, \"events\": %d, \"accounts\": %d, "
      "\"killed\": %s, \"finished\": %zu, \"lost\": %zu, "
      "\"run_twice\": %zu, \"order_violations\": %zu, "
      "\"seconds\": %.3f, \"events_per_s\": %.0f, "
      "\"per_consumer\": [%s], \"output_topic\": \"%s\", "
      "\"set\": [%s], \"ok\": %s}\n",
      cluster ? "embedded" : o.bootstrap.c_str(), o.consumers, o.events,
      o.accounts, killed < 0 ? "null" : std::to_string(killed).c_str(),
      t.distinct(), o.events - t.distinct(), t.lines() - t.distinct(),
      t.order_violations(), took, (t.distinct() - before) / took,
      per_json.c_str(), output_topic.c_str(), sets_json.c_str(),
      good ? "true" : "false");
  }
  return good ? 0 : 1;
}
