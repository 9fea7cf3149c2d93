// SPDX-License-Identifier: Apache-2.0
// Tests of keylane::key and stable_hash: fixed hash values, string and
// integer keys kept apart, equality consistent with the hash.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>

#include "keylane/key.hpp"

using keylane::key;
using keylane::stable_hash;

namespace {

// FNV-1a 64, written out independently of the library.
uint64_t reference_fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull; // offset basis
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull; // FNV prime
  }
  return h;
}

} // namespace

TEST_CASE("stable_hash of strings is FNV-1a 64 with fixed values",
          "[key][hash]") {
  CHECK(stable_hash(std::string_view("")) == 0xcbf29ce484222325ull);
  // Published FNV-1a 64 test vectors.
  CHECK(stable_hash(std::string_view("a")) == 0xaf63dc4c8601ec8cull);
  CHECK(stable_hash(std::string_view("foobar")) == 0x85944171f73967e8ull);
  for (std::string_view s : {"account-17", "EURUSD", "room/42", "\xff\x80"})
    CHECK(stable_hash(s) == reference_fnv1a(s));
  static_assert(stable_hash(std::string_view("")) == 0xcbf29ce484222325ull,
                "stable_hash must be usable at compile time");
}

TEST_CASE("stable_hash of integers is fixed and spreads neighbours",
          "[key][hash]") {
  // splitmix64 finaliser of 0 (first output of splitmix64 seeded with 0).
  CHECK(stable_hash(uint64_t{0}) == 0xe220a8397b1dcdafull);
  CHECK(stable_hash(uint64_t{1}) != stable_hash(uint64_t{2}));
  CHECK(key{5}.hash() == stable_hash(uint64_t{5}));
}

TEST_CASE("a string key and an integer key never compare equal",
          "[key][equality]") {
  key s{"7"};
  key n{7};
  CHECK_FALSE(s == n);
  CHECK(s != n);
  CHECK(s.to_string() == n.to_string()); // same rendering, different keys
  CHECK_FALSE(key{std::string{}} == key{});
  std::unordered_set<key> set{s, n, key{"7"}, key{uint64_t{7}}};
  CHECK(set.size() == 2);
}

TEST_CASE("equal keys have equal hashes whatever they were built from",
          "[key][equality][hash]") {
  std::string str = "acct-1";
  key a{str};
  key b{"acct-1"};
  key c{std::string_view{str}};
  CHECK(a == b);
  CHECK(b == c);
  CHECK(a.hash() == b.hash());
  CHECK(b.hash() == c.hash());
  CHECK(keylane::key_hasher{}(a) == std::hash<key>{}(c));
  CHECK(key{42} == key{uint64_t{42}});
  CHECK(key{42}.hash() == key{uint64_t{42}}.hash());
  CHECK(key{"acct-1"} != key{"acct-2"});
  CHECK(key{1} != key{2});
}

TEST_CASE("a key renders as its string or its decimal integer",
          "[key][format]") {
  CHECK(key{"EURUSD"}.to_string() == "EURUSD");
  CHECK(key{uint64_t{18446744073709551615ull}}.to_string()
        == "18446744073709551615");
  CHECK(key{}.to_string() == "0");
  CHECK(key{"x"}.is_integer() == false);
  CHECK(key{3}.is_integer());
  CHECK(key{3}.integer() == 3);
  CHECK(key{"x"}.str() == "x");
  std::ostringstream out;
  out << key{"room"} << '/' << key{12};
  CHECK(out.str() == "room/12");
}

// Compile checks: every integral type but bool makes a key, implicitly (so
// `submit(int64_t{5}, ...)` compiles); floating point and bool do not.
static_assert(std::is_convertible_v<int64_t, key>, "int64_t ids are keys");
static_assert(std::is_convertible_v<uint32_t, key>, "uint32_t ids are keys");
static_assert(std::is_convertible_v<int32_t, key>, "int32_t ids are keys");
static_assert(std::is_convertible_v<uint64_t, key>, "uint64_t ids are keys");
static_assert(std::is_convertible_v<int16_t, key>, "int16_t ids are keys");
static_assert(std::is_convertible_v<uint16_t, key>, "uint16_t ids are keys");
static_assert(std::is_convertible_v<unsigned char, key>, "bytes are keys");
static_assert(std::is_convertible_v<signed char, key>, "bytes are keys");
static_assert(std::is_convertible_v<long long, key>, "long long is a key");
static_assert(std::is_convertible_v<unsigned long, key>, "size_t is a key");
static_assert(std::is_convertible_v<const int64_t&, key>, "const refs too");
static_assert(!std::is_constructible_v<key, bool>, "a bool is no key");
// A null pointer would take the `const char*` constructor and throw.
static_assert(!std::is_constructible_v<key, std::nullptr_t>,
              "nullptr is no key");
static_assert(!std::is_convertible_v<std::nullptr_t, key>,
              "nullptr is no key");
static_assert(!std::is_constructible_v<key, double>, "a double is no key");
static_assert(!std::is_constructible_v<key, float>, "a float is no key");
static_assert(std::is_nothrow_constructible_v<key, int64_t>,
              "an integer key does not allocate");

TEST_CASE("a key is built from every integral type and means its value",
          "[key][integer]") {
  key k(int64_t{5});
  CHECK(k.is_integer());
  CHECK(k.integer() == 5);
  CHECK(k == key{5});
  CHECK(key(uint32_t{3}) == key{uint64_t{3}});
  CHECK(key(static_cast<unsigned char>(200)) == key{200});
  CHECK(key(int16_t{-2}) == key(int64_t{-2}));
  CHECK(key(static_cast<signed char>(-2)) == key(int64_t{-2}));
  CHECK(key(static_cast<unsigned short>(7)) == key(7L));
  CHECK(key(123456789012345LL) == key(uint64_t{123456789012345ull}));
  // The hash of an integer key is splitmix64 of its uint64_t value, whatever
  // type built it: routes and state keys stay those of earlier builds.
  CHECK(key(int64_t{5}).hash() == stable_hash(uint64_t{5}));
  CHECK(key(uint32_t{5}).hash() == stable_hash(uint64_t{5}));
  CHECK(key(static_cast<unsigned char>(5)).hash() == key{5}.hash());
  std::unordered_set<key> set{key(int64_t{9}), key(uint32_t{9}), key{9},
                              key(static_cast<unsigned char>(9))};
  CHECK(set.size() == 1);
}

TEST_CASE("an integer key is a 64-bit pattern: -1 and 2^64-1 are one key",
          "[key][integer]") {
  constexpr uint64_t all_ones = std::numeric_limits<uint64_t>::max();
  key minus_one(int64_t{-1});
  key max(all_ones);
  CHECK(minus_one == max);
  CHECK(minus_one.hash() == max.hash());
  CHECK(minus_one.hash() == stable_hash(all_ones));
  CHECK(minus_one.integer() == all_ones);
  CHECK(minus_one.to_string() == "18446744073709551615");
  CHECK(key{-1} == max); // an int converts the same way
  CHECK(key(int8_t{-1}) == max);
  // The smallest int64_t is 2^63, not a key of its own sign.
  CHECK(key(std::numeric_limits<int64_t>::min()) == key(uint64_t{1} << 63));
  CHECK(key(int64_t{-2}) != max);
}

TEST_CASE("a key copied or assigned over another is that key, string or "
          "integer", "[unit][key]") {
  using keylane::key;
  key s{std::string{"account-42"}};
  key n{42};
  key s_copy{s};
  key n_copy{n};
  CHECK(s_copy == s);
  CHECK(s_copy.str() == "account-42");
  CHECK(n_copy == n);
  CHECK(n_copy.str().empty());
  // Over a key of the other kind: nothing of the old one stays.
  key a{std::string{"room-7"}};
  a = n;
  CHECK(a == n);
  CHECK(a.is_integer());
  CHECK(a.str().empty());
  CHECK(a.to_string() == "42");
  key b{7};
  b = s;
  CHECK(b == s);
  CHECK_FALSE(b.is_integer());
  CHECK(b.to_string() == "account-42");
  key c{s};
  c = c; // self-assignment keeps it
  CHECK(c == s);
  key moved{std::move(c)};
  CHECK(moved == s);
  key d{std::string{"room-9"}};
  d = key{9}; // moved over a string key
  CHECK(d == key{9});
  CHECK(d.str().empty());
  key e{9};
  e = key{std::string{"room-9"}}; // and the other way
  CHECK(e == key{std::string{"room-9"}});
  CHECK(e.str() == "room-9");
}
