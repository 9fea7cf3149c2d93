// SPDX-License-Identifier: Apache-2.0
#pragma once

// The schema of the config file: every section and key but [handler], with
// how each key is read (validated) into `settings` and written back.

#include <functional>
#include <string>
#include <vector>

#include "config_checker.hpp"
#include "keylane/config.hpp"

namespace keylane::detail {

/// One key of a section: how to read it into the settings and spell it back.
struct field {
  const char* name;
  std::function<void(checker&, const entry&, settings&)> read;
  std::function<std::string(const settings&)> write;
};

/// A table of the file with all its keys.
struct section {
  const char* name;
  std::vector<field> fields;
};

/// Every section, in the order `to_toml` writes them.
const std::vector<section>& schema();

} // namespace keylane::detail
