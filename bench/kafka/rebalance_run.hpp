// SPDX-License-Identifier: Apache-2.0
#pragma once

// One run of keylane_kafka_rebalance_bench: records produced at a steady
// rate while a second member joins the group and later leaves it, each
// record's latency noted by the window it was produced in.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace keylane::bench::kafka {

/// Where the members keep their per-key state (a count per key).
enum class rebalance_state { none, local, changelog };

struct rebalance_setup {
  std::string bootstrap;
  /// A fresh topic with `partitions` partitions, and for `changelog` a
  /// fresh changelog topic as wide; the run's consumer group.
  std::string topic, changelog, group;
  /// Fresh directory for the members' stores.
  std::string dir;
  rebalance_state state = rebalance_state::none;
  int partitions = 12;
  size_t keys = 1000;
  /// Records per second, spread evenly.
  size_t rate = 2000;
  /// Each phase: member A alone; B joins; B leaves (A alone again).
  double phase_s = 4;
  /// librdkafka's partition.assignment.strategy ("" its default, eager
  /// range and round robin; "cooperative-sticky" moves only what moves).
  std::string assignment;
};

/// Latencies (produce to output callback) of the records produced in one
/// window, in seconds.
struct window_result {
  std::string name;
  std::vector<double> latencies;
};

struct rebalance_result {
  /// "steady" (A alone, after the first third of the phase: its
  /// warm-up), "join" (from B's start to its stop), "leave" (from B's stop
  /// to the end).
  std::vector<window_result> windows;
  /// Records produced, answered at least once, and answered more than
  /// once (at-least-once redelivery).
  uint64_t produced = 0, answered = 0, duplicates = 0;
  /// How long B took from its start to its first record, in seconds
  /// (negative: it got none).
  double join_to_first_s = -1;
  /// Restores from the changelog both members made, and their time summed
  /// (milliseconds).
  uint64_t restores = 0, restore_ms = 0;
  std::string error;
};

[[nodiscard]] rebalance_result run_rebalance(const rebalance_setup& s);

/// Name of `s` as the command line spells it.
[[nodiscard]] const char* to_string(rebalance_state s);

} // namespace keylane::bench::kafka
