// Tests of keylane::key and stable_hash: fixed hash values, string and
// integer keys kept apart, equality consistent with the hash.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
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
