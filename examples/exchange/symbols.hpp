// SPDX-License-Identifier: Apache-2.0
#pragma once

// The symbols the exchange lists: S0000 .. S<n-1>.

#include <cstdint>
#include <string>

namespace exchange {

/// The listed symbols `S0000`.. (four digits at least).
class symbol_table {
public:
  explicit symbol_table(uint32_t count) : count_(count) {}

  /// The name of symbol number `i`.
  [[nodiscard]] static std::string name(uint32_t i);

  /// Whether `s` is listed.
  [[nodiscard]] bool listed(const std::string& s) const;

  [[nodiscard]] uint32_t size() const noexcept { return count_; }

private:
  uint32_t count_;
};

} // namespace exchange
