// SPDX-License-Identifier: Apache-2.0
// Fuzzes keylane::parse, the config file reader: any text yields settings
// or an invalid_config error, never a crash or undefined behaviour.

#include "fuzz_check.hpp"
#include "keylane/config_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto res = keylane::parse(keylane::fuzz::as_text(data, size), "fuzz.toml");
  if (!res)
    keylane::fuzz::require_error(res.error(), keylane::errc::invalid_config,
                                 "parse");
  return 0;
}
