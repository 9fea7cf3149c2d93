// SPDX-License-Identifier: Apache-2.0
#include "kafka_args.hpp"

#include <sstream>

#include "command_line.hpp"

namespace keylane::bench::kafka {


const std::vector<std::string>& way_names() {
  static const std::vector<std::string> names{
    "kafka_consume_loop",   "kafka_partition_order", "kafka_key_order_10",
    "kafka_key_order_1000", "kafka_key_order_10000", "kafka_unordered",
    "kafka_state_none",     "kafka_state_local",     "kafka_state_changelog"};
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
  using keylane::cli::add_whole;
  options o;
  CLI::App app{"keylane_kafka_bench"};
  // main prints the help text.
  keylane::cli::read_as_before(app, o.help);
  std::string ways;
  app.add_flag("--quick", o.quick);
  app.add_flag("--json", o.json);
  auto runs = add_whole(app, "--runs", o.runs, 1, 100);
  auto records = add_whole(app, "--records", o.records, 10, 1e7);
  add_whole(app, "--max-delay-us", o.max_delay_us, 0, 1e7);
  add_whole(app, "--partitions", o.partitions, 1, 1000);
  add_whole(app, "--concurrency", o.concurrency, 1, 1e6);
  app.add_option("--ways", ways)
    ->check(keylane::cli::names_check(way_names(), "ways"));
  if (auto e = keylane::cli::parse_or_error(app, argc, argv)) {
    error = *e;
    return std::nullopt;
  }
  o.ways = keylane::cli::split_names(ways);
  if (o.quick) {
    if (runs->count() == 0)
      o.runs = 1;
    if (records->count() == 0)
      o.records = 1000;
  }
  if (o.ways.empty())
    o.ways = way_names();
  return o;
}

} // namespace keylane::bench::kafka
