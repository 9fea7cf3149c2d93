// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>

#include <arg_reader.hpp>

namespace kafka_ledger {

namespace {

constexpr const char* usage = R"(usage: kafka_ledger [--consumers N] [--events N] [--accounts N] [--no-kill]
                    [--bootstrap HOST:PORT] [--config PATH]
                    [--set SECTION.KEY=VALUE]... [--json]

The ledger across processes: an embedded Kafka cluster (librdkafka's mock,
a real Kafka protocol endpoint on loopback) with a 6-partition topic
"ledger", consumer processes in one group each running a keylane runtime,
one of them SIGKILLed mid-stream; prints throughput, the per-key order
check and the accounting of every produced record.

  --consumers N    consumer processes (default 3)
  --events N       account events to produce (default 6000)
  --accounts N     accounts (keys) (default 60)
  --no-kill        do not kill a consumer
  --bootstrap H:P  use a real cluster (topic "ledger" must exist; use a
                   fresh kafka.group per run)
  --config PATH    the runtime's tables and [kafka] (default
                   kafka_ledger.toml beside the sources)
  --set S.K=V      override one key of the file, validated like it
                   (repeatable; docs/config.md and docs/kafka.md), e.g.
                   --set runtime.max_active_keys=8 --set kafka.commit_interval_ms=50
                   --set kafka.output_topic=balances (created on the
                   embedded cluster)
  --json           print one JSON object on stdout (the narrative goes to
                   stderr)
  --help           this text

Exit status: 0 nothing lost and every account in order, 1 otherwise, 2 bad
arguments, a bad config file or a bad --set.
)";

} // namespace

options parse_args(int argc, char** argv) {
  options o;
  o.config = KAFKA_LEDGER_CONFIG;
  keylane::cli::arg_reader args{"kafka_ledger", argc, argv};
  while (args.next()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << usage;
      std::exit(0);
    } else if (args.flag("--no-kill")) {
      o.kill = false;
    } else if (args.flag("--json")) {
      o.json = true;
    } else if (args.flag("--consume")) {
      o.consume = true;
    } else if (auto n = args.count("--consumers", 1)) {
      o.consumers = static_cast<int>(*n);
    } else if (auto n = args.count("--events", 1)) {
      o.events = static_cast<int>(*n);
    } else if (auto n = args.count("--accounts", 1)) {
      o.accounts = static_cast<int>(*n);
    } else if (auto v = args.value("--bootstrap")) {
      o.bootstrap = *v;
    } else if (auto v = args.value("--config")) {
      if (v->empty())
        args.fail("--config needs a file path");
      o.config = *v;
    } else if (auto v = args.value("--set")) {
      o.sets.push_back(*v);
    } else {
      args.fail("unknown argument '" + args.arg() + "'");
    }
  }
  return o;
}

} // namespace kafka_ledger
