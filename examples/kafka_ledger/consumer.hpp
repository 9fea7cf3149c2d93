// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace kafka_ledger {

/// Runs one consumer process: a keylane::kafka::source from `config` with
/// the overrides `sets` (its bootstrap servers replaced by `bootstrap` when
/// not empty) whose handler
/// keeps each account's balance. Prints one line per finished record on
/// stdout ("F partition offset account n assignment"), until SIGTERM;
/// SIGUSR1 prints its counters on stderr.
int run_consumer(const std::string& config, const std::string& bootstrap,
                 const std::vector<std::string>& sets);

} // namespace kafka_ledger
