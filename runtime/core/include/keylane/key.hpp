// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace keylane {

/// Stable 64-bit FNV-1a hash: identical across runs, processes and builds,
/// unlike `std::hash`, so routing decisions can be reproduced and shared.
[[nodiscard]] constexpr uint64_t stable_hash(std::string_view s) noexcept {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Stable hash of an integer key (splitmix64 finaliser).
[[nodiscard]] constexpr uint64_t stable_hash(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The identity of an ordered stream: a string or a 64-bit integer.
/// A string key and an integer key never compare equal, even "7" and 7.
/// The hash is computed once at construction.
///
/// An integer key is built from any integral type (`int64_t`, `uint32_t`,
/// `int`, `unsigned char`, ...; not `bool`) and holds the value converted to
/// `uint64_t`, the way C++ converts it: modulo 2^64. So a key is a 64-bit
/// pattern, not a signed number: `key{int64_t{-1}}` and
/// `key{uint64_t{18446744073709551615}}` are the same key, with the same hash,
/// route and rendering ("18446744073709551615"), and `key{7}`,
/// `key{uint8_t{7}}` and `key{int64_t{7}}` are one key. Two ids that differ
/// as numbers but share their low 64 bits would share a lane; a 64-bit id
/// space (signed or unsigned) never has two such ids.
class key {
public:
  key() noexcept : num_(0), hash_(stable_hash(uint64_t{0})), is_num_(true) {}

  /// An integer key from any integral type but `bool` (see above).
  template <class Integer,
            std::enable_if_t<std::is_integral_v<Integer>
                               && !std::is_same_v<std::remove_cv_t<Integer>,
                                                  bool>,
                             int> = 0>
  key(Integer x) noexcept
    : num_(static_cast<uint64_t>(x)), hash_(stable_hash(num_)),
      is_num_(true) {}

  /// A `bool` is no key: `key{map.count(x)}` would make two keys of a whole
  /// workload, which is always a slip.
  key(bool) = delete;

  /// A null pointer is no key: `key{nullptr}` would pick the `const char*`
  /// constructor and throw at run time; this makes it a compile error.
  key(std::nullptr_t) = delete;

  key(std::string s) noexcept
    : str_(std::move(s)), num_(0), hash_(stable_hash(str_) ^ 1u),
      is_num_(false) {}

  key(const char* s) : key(std::string{s}) {}

  key(std::string_view s) : key(std::string{s}) {}

  // An integer key's copy or move leaves its (empty) string alone: a key
  // is copied or moved into every event, and the string's copy (a call to
  // memcpy even for an empty one) cost more than the rest.
  key(const key& x)
    : num_(x.num_), hash_(x.hash_), is_num_(x.is_num_) {
    if (!x.is_num_)
      str_ = x.str_;
  }
  key& operator=(const key& x) { return assign(x); }
  key(key&& x) noexcept
    : num_(x.num_), hash_(x.hash_), is_num_(x.is_num_) {
    if (!x.is_num_)
      str_ = std::move(x.str_);
  }
  key& operator=(key&& x) noexcept { return assign(std::move(x)); }

  /// True when the key is an integer.
  [[nodiscard]] bool is_integer() const noexcept { return is_num_; }

  /// The integer value; 0 for string keys.
  [[nodiscard]] uint64_t integer() const noexcept { return num_; }

  /// The string value; empty for integer keys.
  [[nodiscard]] const std::string& str() const noexcept { return str_; }

  /// The stable hash of this key.
  [[nodiscard]] uint64_t hash() const noexcept { return hash_; }

  /// Renders the key: the string itself, or the integer in decimal.
  [[nodiscard]] std::string to_string() const {
    return is_num_ ? std::to_string(num_) : str_;
  }

  friend bool operator==(const key& x, const key& y) noexcept {
    return x.hash_ == y.hash_ && x.is_num_ == y.is_num_ && x.num_ == y.num_
           && x.str_ == y.str_;
  }

  friend bool operator!=(const key& x, const key& y) noexcept {
    return !(x == y);
  }

  friend std::ostream& operator<<(std::ostream& out, const key& k) {
    return out << k.to_string();
  }

private:
  // Both assignments: the string only from a string key (see above).
  template <class Key>
  key& assign(Key&& x) {
    if (this != &x) {
      if (!x.is_num_)
        str_ = std::forward<Key>(x).str_;
      else
        str_.clear();
      num_ = x.num_;
      hash_ = x.hash_;
      is_num_ = x.is_num_;
    }
    return *this;
  }

  std::string str_;
  uint64_t num_;
  uint64_t hash_;
  bool is_num_;
};

/// Hasher for unordered containers keyed by `key`.
struct key_hasher {
  size_t operator()(const key& k) const noexcept {
    return static_cast<size_t>(k.hash());
  }
};

} // namespace keylane

template <>
struct std::hash<keylane::key> {
  size_t operator()(const keylane::key& k) const noexcept {
    return static_cast<size_t>(k.hash());
  }
};
