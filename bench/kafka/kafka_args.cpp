// SPDX-License-Identifier: Apache-2.0
#include "kafka_args.hpp"

#include <sstream>

#include "command_line.hpp"

namespace keylane::bench::kafka {


const std::vector<std::string>& way_names() {
  static const std::vector<std::string> names{
    "kafka_consume_loop",   "kafka_partition_order", "kafka_key_order_10",
    "kafka_key_order_1000", "kafka_key_order_10000", "kafka_unordered"};
  return names;
}

std::string usage(const char* argv0) {
  std::ostringstream out;
  out << "usage: " << argv0 << " [options]\n"
      << "Kafka records through keylane on librdkafka's mock cluster: "
         "partition order,\n"
         "key order with 10 / 1,000 / 10,000 keys and unordered, each record "
         "taking 0-5 ms\n"
         "asynchronously, and a plain consume loop as the ceiling.\n\n"
      << "  --quick            smoke run: 1,000 records, 1 run (CTest runs "
         "it)\n"
      << "  --json             one JSON object per row on stdout (table on "
         "stderr)\n"
      << "  --runs N           runs per row (default 3; --quick: 1)\n"
      << "  --records N        records per topic (default 10000; --quick: "
         "1000)\n"
      << "  --max-delay-us N   handler time 0..N us per record (default "
         "5000)\n"
      << "  --partitions N     partitions per topic (default 12)\n"
      << "  --concurrency N    keylane ways: runtime.max_active_keys "
         "(default 100)\n"
      << "  --ways a,b         ways to run (default all):";
  for (auto& w : way_names())
    out << ' ' << w;
  out << "\n  --help             this text\n\n"
      << "Exit status: 0 ok, 1 a run did not complete or an ordered way broke "
         "per-key order,\n2 bad arguments.\n";
  return out.str();
}

std::optional<options> parse_args(int argc, char** argv, std::string& error) {
  using keylane::cli::number_check;
  options o;
  CLI::App app{"keylane_kafka_bench"};
  // main prints the help text.
  keylane::cli::read_as_before(app, o.help);
  // Whole numbers are read as doubles, so that "--records 1e6" stays valid.
  double runs = o.runs, records = static_cast<double>(o.records),
         max_delay = static_cast<double>(o.max_delay_us),
         partitions = o.partitions,
         concurrency = static_cast<double>(o.concurrency);
  std::string ways;
  app.add_flag("--quick", o.quick);
  app.add_flag("--json", o.json);
  auto runs_opt = app.add_option("--runs", runs)
                    ->check(number_check(1, 100, true));
  auto records_opt = app.add_option("--records", records)
                       ->check(number_check(10, 1e7, true));
  app.add_option("--max-delay-us", max_delay)
    ->check(number_check(0, 1e7, true));
  app.add_option("--partitions", partitions)
    ->check(number_check(1, 1000, true));
  app.add_option("--concurrency", concurrency)
    ->check(number_check(1, 1e6, true));
  app.add_option("--ways", ways)
    ->check(keylane::cli::names_check(way_names(), "ways"));
  if (auto e = keylane::cli::parse_or_error(app, argc, argv)) {
    error = *e;
    return std::nullopt;
  }
  o.runs = static_cast<int>(runs);
  o.records = static_cast<size_t>(records);
  o.max_delay_us = static_cast<int64_t>(max_delay);
  o.partitions = static_cast<int>(partitions);
  o.concurrency = static_cast<size_t>(concurrency);
  o.ways = keylane::cli::split_names(ways);
  bool runs_set = runs_opt->count() > 0, records_set = records_opt->count() > 0;
  if (o.quick) {
    if (!runs_set)
      o.runs = 1;
    if (!records_set)
      o.records = 1000;
  }
  if (o.ways.empty())
    o.ways = way_names();
  return o;
}

} // namespace keylane::bench::kafka
