#pragma once

#include <string>

namespace kafka_ledger {

/// Runs one consumer process: a keylane::kafka::source from `config` (its
/// bootstrap servers replaced by `bootstrap` when not empty) whose handler
/// keeps each account's balance. Prints one line per finished record on
/// stdout ("F partition offset account n assignment"), until stdin closes or SIGTERM.
int run_consumer(const std::string& config, const std::string& bootstrap);

} // namespace kafka_ledger
