// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <cstdlib>
#include <iostream>

#include <command_line.hpp>

namespace kafka_ledger {

namespace {

constexpr const char* usage = R"(usage: kafka_ledger [--consumers N] [--events N] [--accounts N] [--no-kill]
                    [--bootstrap HOST:PORT] [--config PATH]
                    [--set SECTION.KEY=VALUE]... [--json] [--print-config]

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
  --print-config   print the runtime's effective settings as TOML (the
                   [kafka] table is the file's, with its --set) and exit 0
  --help           this text

Exit status: 0 nothing lost and every account in order, 1 otherwise, 2 bad
arguments, a bad config file or a bad --set.
)";

} // namespace

options parse_args(int argc, char** argv) {
  options o;
  o.config = KAFKA_LEDGER_CONFIG;
  bool no_kill = false;
  keylane::cli::command_line cl{"kafka_ledger", usage};
  cl.flag("--no-kill", no_kill);
  cl.flag("--json", o.json);
  cl.flag("--consume", o.consume);
  cl.count("--consumers", o.consumers, 1);
  cl.count("--events", o.events, 1);
  cl.count("--accounts", o.accounts, 1);
  cl.text("--bootstrap", o.bootstrap);
  cl.settings(o.config, o.sets, o.print_config);
  cl.parse(argc, argv);
  o.kill = !no_kill;
  return o;
}

} // namespace kafka_ledger
