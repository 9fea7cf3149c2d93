// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the fuzz targets share: their input as text, and a failure that
// libFuzzer records as a crash with the input that caused it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <caf/error.hpp>

#include "keylane/errc.hpp"

namespace keylane::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Stops the run with `what`: libFuzzer saves the input as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

/// An error must be keylane's `expected`, with a message to show.
inline void require_error(const caf::error& err, errc expected,
                          const char* where) {
  if (!err || err.code() != static_cast<uint8_t>(expected)
      || render(err).size() <= std::string{to_string(expected)}.size() + 2)
    fail(std::string{where} + ": not a named " + to_string(expected)
         + " error: " + render(err));
}

} // namespace keylane::fuzz
