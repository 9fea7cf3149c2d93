// SPDX-License-Identifier: Apache-2.0
#include "kafka_args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace keylane::bench::kafka {

namespace {

bool whole(const std::string& s, double lo, double hi, double& out) {
  if (s.empty())
    return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end && *end == '\0' && out >= lo && out <= hi
         && out == static_cast<double>(static_cast<int64_t>(out));
}

} // namespace

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
  options o;
  bool runs_set = false, records_set = false;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    std::string v;
    auto value = [&] {
      if (i + 1 >= args.size()) {
        error = a + " needs a value";
        return false;
      }
      v = args[++i];
      return true;
    };
    double x = 0;
    auto number = [&](double lo, double hi) {
      if (!value())
        return false;
      if (!whole(v, lo, hi, x)) {
        std::ostringstream m;
        m << a << ' ' << v << ": must be a whole number from " << lo
          << " to " << hi;
        error = m.str();
        return false;
      }
      return true;
    };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--runs") {
      if (!number(1, 100))
        return std::nullopt;
      o.runs = static_cast<int>(x);
      runs_set = true;
    } else if (a == "--records") {
      if (!number(10, 1e7))
        return std::nullopt;
      o.records = static_cast<size_t>(x);
      records_set = true;
    } else if (a == "--max-delay-us") {
      if (!number(0, 1e7))
        return std::nullopt;
      o.max_delay_us = static_cast<int64_t>(x);
    } else if (a == "--partitions") {
      if (!number(1, 1000))
        return std::nullopt;
      o.partitions = static_cast<int>(x);
    } else if (a == "--concurrency") {
      if (!number(1, 1e6))
        return std::nullopt;
      o.concurrency = static_cast<size_t>(x);
    } else if (a == "--ways") {
      if (!value())
        return std::nullopt;
      std::istringstream in{v};
      std::string w;
      while (std::getline(in, w, ',')) {
        if (w.empty())
          continue;
        auto& known = way_names();
        if (std::find(known.begin(), known.end(), w) == known.end()) {
          error = "unknown way '" + w + "'; known:";
          for (auto& k : known)
            error += ' ' + k;
          return std::nullopt;
        }
        o.ways.push_back(w);
      }
      if (o.ways.empty()) {
        error = "--ways needs at least one name";
        return std::nullopt;
      }
    } else {
      error = "unknown argument '" + a + "' (see --help)";
      return std::nullopt;
    }
  }
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
