// SPDX-License-Identifier: Apache-2.0
#include "rebalance_run.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "keylane/errc.hpp"
#include "keylane/kafka/producer.hpp"
#include "keylane/kafka/source.hpp"
#include "../item.hpp"
#include "count_state.hpp"
#include "keylane/stateful_handler.hpp"

namespace keylane::bench::kafka {

namespace kk = keylane::kafka;

namespace {

using clk = std::chrono::steady_clock;

/// Counts its key's records: keyed state changed by every record, and no
/// other work, so the latency is keylane's and the cluster's.
struct count_handler
  : keylane::stateful_handler<kk::record, std::string, count_state> {
  void on_event(kk::record&, keylane::completion<std::string> done) override {
    state().n += 1;
    done.ok(std::string{});
  }
};

/// Reads "<i>:<produce_ns>"; false on anything else.
bool parse(const std::string& v, uint64_t& i, int64_t& t) {
  auto colon = v.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
    return false;
  char* end = nullptr;
  i = std::strtoull(v.c_str(), &end, 10);
  if (end != v.c_str() + colon)
    return false;
  t = std::strtoll(v.c_str() + colon + 1, &end, 10);
  return end == v.c_str() + v.size();
}

/// What the members' output callbacks note: per record, how often it was
/// answered and the latency of its first answer.
class answers {
public:
  explicit answers(size_t records) : seen_(records), latency_ns_(records) {
    for (auto& s : seen_)
      s.store(0, std::memory_order_relaxed);
  }

  void note(const std::string& value) {
    uint64_t i;
    int64_t t;
    if (!parse(value, i, t) || i >= seen_.size()) {
      bad_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    auto lat = now_ns() - t;
    if (seen_[i].fetch_add(1, std::memory_order_acq_rel) == 0)
      latency_ns_[i].store(lat, std::memory_order_release);
  }

  [[nodiscard]] uint64_t answered() const {
    uint64_t n = 0;
    for (auto& s : seen_)
      n += s.load(std::memory_order_acquire) > 0 ? 1 : 0;
    return n;
  }

  [[nodiscard]] uint64_t duplicates() const {
    uint64_t n = 0;
    for (auto& s : seen_) {
      auto k = s.load(std::memory_order_acquire);
      n += k > 1 ? k - 1 : 0;
    }
    return n + bad_.load();
  }

  [[nodiscard]] int64_t latency_ns(size_t i) const {
    return latency_ns_[i].load(std::memory_order_acquire);
  }
  [[nodiscard]] bool seen(size_t i) const {
    return seen_[i].load(std::memory_order_acquire) > 0;
  }

private:
  std::vector<std::atomic<uint32_t>> seen_;
  std::vector<std::atomic<int64_t>> latency_ns_;
  std::atomic<uint64_t> bad_{0};
};

kk::config member_config(const rebalance_setup& s, const std::string& name) {
  kk::config cfg;
  auto& rt = cfg.runtime;
  rt.threads = 2;
  rt.handler = "count_handler";
  rt.log = keylane::log_level::warning;
  if (s.state != rebalance_state::none) {
    rt.state_store = keylane::state_backend::rocksdb;
    rt.state_path = s.dir + "/" + name;
  }
  auto& ks = cfg.source;
  ks.bootstrap_servers = s.bootstrap;
  ks.group = s.group;
  ks.topics = {s.topic};
  ks.origin = "keylane_kafka_rebalance_bench " + name;
  if (s.state == rebalance_state::changelog)
    ks.changelog_topic = s.changelog;
  // As keylane_kafka_bench: below 3 s the mock's group never formed here.
  // The mock answers a fetch only after fetch.wait.max.ms (500 ms by
  // default) even when records arrive meanwhile, where a broker answers
  // on their arrival: 10 ms keeps the mock's own wait out of the figures.
  ks.properties = {{"session.timeout.ms", "3000"},
                   {"heartbeat.interval.ms", "300"},
                   {"fetch.wait.max.ms", "10"},
                   {"log_level", "2"}};
  if (!s.assignment.empty())
    ks.properties["partition.assignment.strategy"] = s.assignment;
  return cfg;
}

caf::expected<std::unique_ptr<kk::source>>
start_member(const rebalance_setup& s, const std::string& name, answers& a,
             std::atomic<int64_t>* first_ns) {
  return kk::source::start(
    member_config(s, name),
    [](const keylane::handler_params&) {
      return std::make_unique<count_handler>();
    },
    [&a, first_ns](kk::record_event& ev) {
      if (first_ns && first_ns->load(std::memory_order_relaxed) == 0)
        first_ns->store(now_ns(), std::memory_order_relaxed);
      a.note(ev.payload.value);
    });
}

void sleep_until_ns(int64_t t) {
  auto now = now_ns();
  if (t > now)
    std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
}

} // namespace

const char* to_string(rebalance_state s) {
  switch (s) {
    case rebalance_state::none:
      return "none";
    case rebalance_state::local:
      return "local";
    case rebalance_state::changelog:
      return "changelog";
  }
  return "?";
}

rebalance_result run_rebalance(const rebalance_setup& s) {
  rebalance_result out;
  auto phase_ns = static_cast<int64_t>(s.phase_s * 1e9);
  auto total = static_cast<size_t>(static_cast<double>(s.rate) * s.phase_s
                                   * 3);
  answers a{total};
  auto prod = kk::producer::start(s.bootstrap,
                                  {{"linger.ms", "0"}, {"log_level", "2"}});
  if (!prod) {
    out.error = "producer: " + keylane::render(prod.error());
    return out;
  }
  auto member_a = start_member(s, "a", a, nullptr);
  if (!member_a) {
    out.error = "member a: " + keylane::render(member_a.error());
    return out;
  }
  // The steady window starts once A owns the partitions.
  auto joined_by = clk::now() + std::chrono::seconds(30);
  while ((*member_a)->stats().assigned == 0 && clk::now() < joined_by)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if ((*member_a)->stats().assigned == 0) {
    out.error = "member a got no partitions in 30 s";
    return out;
  }

  auto t0 = now_ns();
  // Produce times, kept to sort records into windows afterwards.
  std::vector<int64_t> produced_at(total, 0);
  std::string produce_error;
  std::thread producer_thread{[&] {
    std::vector<uint64_t> next(s.keys, 0);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < total; ++i) {
      sleep_until_ns(t0 + static_cast<int64_t>(static_cast<double>(i) * 1e9
                                               / static_cast<double>(s.rate)));
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      auto j = rng % s.keys;
      auto t = now_ns();
      produced_at[i] = t;
      auto part = static_cast<int32_t>(j % static_cast<uint64_t>(s.partitions));
      if (auto err = (*prod)->produce(s.topic, "k" + std::to_string(j),
                                      std::to_string(i) + ':'
                                        + std::to_string(t),
                                      {}, part)) {
        produce_error = keylane::render(err);
        return;
      }
    }
  }};

  std::atomic<int64_t> b_first{0};
  sleep_until_ns(t0 + phase_ns);
  auto b_start = now_ns();
  auto member_b = start_member(s, "b", a, &b_first);
  sleep_until_ns(t0 + 2 * phase_ns);
  auto b_stop = now_ns();
  auto note_restores = [&out](const kk::source& m) {
    auto st = m.stats();
    out.restores += st.restores;
    out.restore_ms += st.restore_ms;
  };
  if (member_b) {
    (*member_b)->stop();
    note_restores(**member_b);
  }
  producer_thread.join();
  if (auto err = (*prod)->flush(std::chrono::seconds(30)); err
                                                           && produce_error
                                                                .empty())
    produce_error = keylane::render(err);
  auto deadline = clk::now() + std::chrono::seconds(30);
  while (a.answered() < total && clk::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  (*member_a)->stop();
  note_restores(**member_a);

  if (!member_b)
    out.error = "member b: " + keylane::render(member_b.error());
  else if (!produce_error.empty())
    out.error = "produce: " + produce_error;
  if (b_first.load() > 0)
    out.join_to_first_s = static_cast<double>(b_first.load() - b_start)
                          * 1e-9;
  out.produced = total;
  out.answered = a.answered();
  out.duplicates = a.duplicates();
  out.windows = {{"steady", {}}, {"join", {}}, {"leave", {}}};
  for (size_t i = 0; i < total; ++i) {
    if (!a.seen(i))
      continue;
    auto t = produced_at[i];
    // A's first third of the phase is its warm-up: its first fetch comes
    // some 600 ms after its assignment on the mock.
    auto w = t < t0 + phase_ns / 3 ? -1
             : t < b_start        ? 0
             : t < b_stop         ? 1
                                  : 2;
    if (w >= 0)
      out.windows[static_cast<size_t>(w)].latencies.push_back(
        static_cast<double>(a.latency_ns(i)) * 1e-9);
  }
  std::error_code ec;
  std::filesystem::remove_all(s.dir + "/a", ec);
  std::filesystem::remove_all(s.dir + "/b", ec);
  std::filesystem::remove(s.dir + "/a.changelog", ec);
  std::filesystem::remove(s.dir + "/b.changelog", ec);
  return out;
}

} // namespace keylane::bench::kafka
