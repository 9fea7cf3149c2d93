// SPDX-License-Identifier: Apache-2.0
#pragma once

// How the state stores spell a key as bytes: one kind byte, then the key.
// 'n' + the integer in 8 bytes big-endian, 's' + the string's bytes. So
// the integer 7 and the string "7" never collide, and ordering the
// encodings bytewise (RocksDB's default comparator) lists every integer
// key before every string key, integers in numeric order and strings
// bytewise. Keys that start with a byte below 'n' never hold state:
// "\0..." is reserved for the store's own marks (`state_format_key`).
// Private to the library (not installed).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "keylane/key.hpp"

namespace keylane::detail {

/// The kind byte of an integer key.
inline constexpr char state_key_integer = 'n';

/// The kind byte of a string key.
inline constexpr char state_key_string = 's';

/// The reserved key that marks a RocksDB database as a keylane state store;
/// its value is `state_format_version`.
inline constexpr std::string_view state_format_key{
  "\0keylane.state.format", sizeof("\0keylane.state.format") - 1};

/// The value of `state_format_key` this build writes and reads.
inline constexpr std::string_view state_format_version{"1"};

/// The bytes that stand for `k` in a store.
[[nodiscard]] inline std::string encode_state_key(const key& k) {
  std::string out;
  if (k.is_integer()) {
    out.reserve(9);
    out += state_key_integer;
    auto x = k.integer();
    for (int shift = 56; shift >= 0; shift -= 8)
      out += static_cast<char>((x >> shift) & 0xff);
  } else {
    out.reserve(1 + k.str().size());
    out += state_key_string;
    out += k.str();
  }
  return out;
}

/// The key `encode_state_key` wrote into `bytes`; nullopt for bytes that no
/// key encodes to (a reserved key, an unknown kind, a wrong length).
[[nodiscard]] inline std::optional<key>
decode_state_key(std::string_view bytes) {
  if (bytes.empty())
    return std::nullopt;
  auto rest = bytes.substr(1);
  if (bytes[0] == state_key_string)
    return key{rest};
  if (bytes[0] != state_key_integer || rest.size() != 8)
    return std::nullopt;
  uint64_t x = 0;
  for (char c : rest)
    x = x << 8 | static_cast<unsigned char>(c);
  return key{x};
}

} // namespace keylane::detail
