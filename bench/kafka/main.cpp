// SPDX-License-Identifier: Apache-2.0
// keylane_kafka_bench: Kafka records through keylane on librdkafka's mock
// cluster (in this process). 10,000 records, each taking 0-5 ms
// asynchronously, read by partition order (one event at a time per
// partition), keylane key order with 10 / 1,000 / 10,000 keys, unordered,
// and a plain consume loop as the ceiling. Prints a table (or --json, one
// object per row) and exits non-zero if a run did not complete or an
// ordered way broke per-key order. See bench/README.md.

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../measure.hpp"
#include "../report.hpp"
#include "kafka_args.hpp"
#include "kafka_feed.hpp"
#include "kafka_ways.hpp"
#include "keylane/errc.hpp"
#include "keylane/kafka/mock_cluster.hpp"

using namespace keylane::bench;
using namespace keylane::bench::kafka;

namespace {

/// One way over all its runs.
struct kafka_row {
  std::string way;
  const workload* w = nullptr;
  bool ordered = true;
  std::vector<double> totals, rates;
  uint64_t violations = 0;
  bool completed = true;
  std::string error;
};

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string json_row(const kafka_row& r, const options& o,
                     const std::string& machine) {
  auto rate = summarize(r.rates), total = summarize(r.totals);
  std::ostringstream out;
  out << "{\"way\": \"" << r.way << "\", \"workload\": \"" << r.w->name
      << "\", \"records\": " << r.w->records << ", \"keys\": " << r.w->keys
      << ", \"partitions\": " << r.w->partitions
      << ", \"max_delay_us\": " << r.w->max_delay_us
      << ", \"concurrency\": " << o.concurrency
      << ", \"ordered\": " << (r.ordered ? "true" : "false")
      << ", \"runs\": " << r.totals.size()
      << ", \"events_per_s\": " << num(rate.median)
      << ", \"total_s\": " << num(total.median)
      << ", \"violations\": " << r.violations
      << ", \"completed\": " << (r.completed ? "true" : "false")
      << ", \"machine\": \"" << machine << "\", \"spread\": {\"events_per_s\": ["
      << num(rate.min) << ", " << num(rate.max) << "], \"total_s\": ["
      << num(total.min) << ", " << num(total.max) << "]}}";
  return out.str();
}

double median_total(const std::vector<kafka_row>& rows,
                    const std::string& way) {
  for (auto& r : rows)
    if (r.way == way && !r.totals.empty())
      return summarize(r.totals).median;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string error;
  auto parsed = parse_args(argc, argv, error);
  if (!parsed) {
    std::cerr << "keylane_kafka_bench: " << error << "\n\n" << usage(argv[0]);
    return 2;
  }
  auto& o = *parsed;
  if (o.help) {
    std::cout << usage(argv[0]);
    return 0;
  }
  auto machine = machine_description();
  std::cerr << "keylane_kafka_bench on " << machine << "\nload average "
            << load_average() << "; " << o.runs << " run(s) per row; "
            << o.records << " records, " << o.partitions
            << " partitions, handler 0-" << o.max_delay_us
            << " us (asynchronous), keylane concurrency " << o.concurrency
            << "\n";
  auto mc = keylane::kafka::mock_cluster::start(1);
  if (!mc) {
    std::cerr << "keylane_kafka_bench: mock cluster: "
              << keylane::render(mc.error()) << "\n";
    return 1;
  }
  auto bootstrap = (*mc)->bootstrap_servers();

  // One topic per key count the chosen ways need.
  std::map<size_t, workload> topics;
  auto keys_of = [](const std::string& way) -> size_t {
    if (way == "kafka_key_order_10")
      return 10;
    if (way == "kafka_key_order_1000" || way.rfind("kafka_state_", 0) == 0)
      return 1000;
    return 10000;
  };
  for (auto& way : o.ways) {
    auto k = keys_of(way);
    if (topics.count(k))
      continue;
    auto w = make_workload(k, o.records, o.partitions, o.max_delay_us);
    if (auto err = fill(**mc, w); !err.empty()) {
      std::cerr << "keylane_kafka_bench: " << err << "\n";
      return 1;
    }
    topics.emplace(k, std::move(w));
  }

  // RocksDB directories of the stateful ways, one per run.
  auto state_dir = std::filesystem::temp_directory_path()
                   / ("keylane-kafka-bench-" + std::to_string(::getpid()));
  std::vector<kafka_row> rows;
  for (auto& way : o.ways) {
    kafka_row r;
    r.way = way;
    r.w = &topics.at(keys_of(way));
    r.ordered = way != "kafka_unordered";
    rows.push_back(std::move(r));
  }
  // Runs alternate between ways, so a slow spell of the machine spreads
  // over all of them.
  int groups = 0;
  for (int run = 0; run < o.runs; ++run)
    for (auto& r : rows) {
      run_result res;
      auto group = "bench-" + std::to_string(++groups);
      if (r.way == "kafka_consume_loop") {
        res = run_consume_loop(bootstrap, *r.w);
      } else if (r.way.rfind("kafka_state_", 0) == 0) {
        auto kept = r.way == "kafka_state_none"    ? state_kept::none
                    : r.way == "kafka_state_local" ? state_kept::local
                                                   : state_kept::changelog;
        auto changelog = group + "-state";
        if (kept == state_kept::changelog)
          if (auto err = (*mc)->create_topic(changelog, o.partitions)) {
            r.error = keylane::render(err);
            r.completed = false;
            continue;
          }
        res = run_keylane_state(bootstrap, *r.w, kept, o.concurrency, group,
                                state_dir.string(), changelog);
      } else
        res = run_keylane(bootstrap, *r.w,
                          r.way == "kafka_partition_order" ? keyed_by::partition
                          : r.way == "kafka_unordered" ? keyed_by::record_id
                                                       : keyed_by::record_key,
                          o.concurrency, group);
      if (!res.error.empty()) {
        r.error = res.error;
        r.completed = false;
        continue;
      }
      r.completed = r.completed && res.completed;
      r.violations += res.violations;
      r.totals.push_back(res.total_s);
      r.rates.push_back(res.total_s > 0
                          ? static_cast<double>(res.finished) / res.total_s
                          : 0);
      char line[256];
      std::snprintf(line, sizeof line,
                    "   run %d  %-22s %-24s %7.3f s %10.0f ev/s  viol %llu%s\n",
                    run + 1, r.way.c_str(), r.w->name.c_str(), res.total_s,
                    r.rates.back(),
                    static_cast<unsigned long long>(res.violations),
                    res.completed ? "" : "  INCOMPLETE");
      std::cerr << line;
    }

  std::error_code ec;
  std::filesystem::remove_all(state_dir, ec);

  std::ostringstream table;
  char buf[256];
  table << "keylane_kafka_bench - " << machine << "\n"
        << "mock cluster: 1 broker in this process; " << o.records
        << " records per topic, " << o.partitions << " partitions; handler "
        << "0-" << o.max_delay_us << " us via run_later; keylane: order none, "
        << "2 threads, max_active_keys " << o.concurrency << "\n"
        << "total: first record at the handler (loop: read) to last "
           "finished; median of "
        << o.runs << " run(s), min-max in brackets\n\n";
  std::snprintf(buf, sizeof buf, "%-22s %-24s %11s %20s %6s %s\n", "way",
                "workload", "events/s", "total s", "viol", "");
  table << buf;
  int status = 0;
  for (auto& r : rows) {
    auto rate = summarize(r.rates), total = summarize(r.totals);
    std::snprintf(buf, sizeof buf,
                  "%-22s %-24s %11.0f %7.3f [%.3f-%.3f] %6llu %s\n",
                  r.way.c_str(), r.w->name.c_str(), rate.median, total.median,
                  total.min, total.max,
                  static_cast<unsigned long long>(r.violations),
                  !r.error.empty() ? ("ERROR " + r.error).c_str()
                  : !r.completed   ? "INCOMPLETE"
                  : r.ordered      ? ""
                                   : "(not ordered: not asserted)");
    table << buf;
    if (!r.completed || (r.ordered && r.violations != 0))
      status = 1;
  }
  // The targets, as ratios of median totals.
  auto unordered = median_total(rows, "kafka_unordered");
  auto partition = median_total(rows, "kafka_partition_order");
  for (const char* way : {"kafka_key_order_1000", "kafka_key_order_10000"}) {
    auto key = median_total(rows, way);
    if (key <= 0)
      continue;
    table << "\n" << way << ":";
    if (unordered > 0) {
      std::snprintf(buf, sizeof buf, " %.2fx the unordered time (target <= 1.2)",
                    key / unordered);
      table << buf;
    }
    if (partition > 0) {
      std::snprintf(buf, sizeof buf,
                    "; partition order takes %.1fx as long (target >= 5)",
                    partition / key);
      table << buf;
    }
  }
  table << "\n";
  if (o.json) {
    for (auto& r : rows)
      if (r.w)
        std::cout << json_row(r, o, machine) << "\n";
    std::cerr << table.str();
  } else {
    std::cout << table.str();
  }
  if (status != 0)
    std::cerr << "keylane_kafka_bench: FAILED: a run did not complete or an "
                 "ordered way broke per-key order\n";
  return status;
}
