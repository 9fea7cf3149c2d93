// SPDX-License-Identifier: Apache-2.0
// The gateway's FIX framer: what a connection may make the server keep.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fix/fix_framer.hpp"

using exchange::fix::fix_framer;
using result = fix_framer::result;

namespace {

// `body` with a header and a trailer; the checksum value is QuickFIX's to
// check, not the framer's.
std::string frame(const std::string& body, const std::string& begin = "FIX.4.4") {
  return "8=" + begin + "\0019=" + std::to_string(body.size()) + "\001" + body
         + "10=000\001";
}

const std::string logon = frame("35=A\00134=1\00149=LOAD1\00156=KEYLANE\001"
                                "52=20261203-10:00:00\00198=0\001108=30\001");
const std::string order = frame("35=D\00134=2\00149=LOAD1\00156=KEYLANE\001"
                                "11=c1\00155=S0001\00154=1\00138=10\00144=1.00\001");

// Every message `next` yields until it needs more.
std::vector<std::string> drain(fix_framer& f, std::vector<result>* other = nullptr) {
  std::vector<std::string> out;
  for (;;) {
    const char* m = nullptr;
    size_t n = 0;
    auto r = f.next(m, n);
    if (r == result::message) {
      out.emplace_back(m, n);
      continue;
    }
    if (other != nullptr)
      other->push_back(r);
    if (r == result::need_more || r == result::too_long)
      return out;
  }
}

} // namespace

TEST_CASE("a BodyLength larger than the buffer is refused before its body is read",
          "[fix][framer]") {
  fix_framer f(4096);
  std::string head = "8=FIX.4.4\0019=999999999\001";
  REQUIRE(f.feed(head.data(), head.size()) == head.size());
  std::vector<result> rs;
  CHECK(drain(f, &rs).empty());
  REQUIRE(rs.size() == 1);
  CHECK(rs[0] == result::too_long);
  CHECK(f.refused_length() == 999999999);

  SECTION("one byte over the capacity is refused too") {
    fix_framer g(order.size() - 1);
    g.feed(order.data(), order.size());
    rs.clear();
    CHECK(drain(g, &rs).empty());
    CHECK(rs.back() == result::too_long);
  }
  SECTION("a BodyLength of more digits than any limit is refused at once") {
    fix_framer g(4096);
    std::string h = "8=FIX.4.4\0019=00000000001";
    g.feed(h.data(), h.size());
    rs.clear();
    drain(g, &rs);
    CHECK(rs.back() == result::too_long);
  }
}

TEST_CASE("bytes that cannot start a message are dropped, so memory stays bounded",
          "[fix][framer]") {
  fix_framer f(4096);
  const std::string junk(1000, 'x');
  // 32 MiB of garbage through a 4 KiB buffer: every byte scanned once and
  // thrown away; nothing piles up.
  for (int i = 0; i < 32 * 1024; ++i) {
    REQUIRE(f.feed(junk.data(), junk.size()) == junk.size());
    REQUIRE(drain(f).empty());
    REQUIRE(f.buffered() == 0);
  }
  CHECK(f.discarded() == 32u * 1024 * 1000);
  CHECK(f.capacity() == 4096);

  SECTION("a message after the garbage still arrives") {
    std::string s = "garbage 8" + order; // a lone '8' before the real one
    f.feed(s.data(), s.size());
    auto got = drain(f);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == order);
  }
  SECTION("a trailing '8' is kept in case the next read brings its '='") {
    std::string s = "xxxx8";
    f.feed(s.data(), s.size());
    CHECK(drain(f).empty());
    CHECK(f.buffered() == 1);
    std::string rest = order.substr(1);
    f.feed(rest.data(), rest.size());
    auto got = drain(f);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == order);
  }
}

TEST_CASE("a message whose CheckSum is not where BodyLength ends is garbled and skipped",
          "[fix][framer]") {
  fix_framer f(4096);
  std::string bad = "8=FIX.4.4\0019=5\00135=A\00110=000\001"; // body is 5, says 5: ok
  std::string wrong = "8=FIX.4.4\0019=3\00135=A\00110=000\001"; // says 3
  std::string s = wrong + order;
  f.feed(s.data(), s.size());
  std::vector<result> rs;
  auto got = drain(f, &rs);
  CHECK(rs.front() == result::garbled);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == order);
  fix_framer g(4096);
  g.feed(bad.data(), bad.size());
  CHECK(drain(g).size() == 1);

  SECTION("headers without a BodyLength are garbled") {
    for (std::string h : {std::string("8=\0019=5\001"), std::string("8=FIX.4.4\00135=A\001"),
                          std::string("8=FIX.4.4\0019=\001"), std::string("8=FIX.4.4\0019=1x\001"),
                          "8=" + std::string(40, 'F') + "\001"}) {
      fix_framer h1(4096);
      h1.feed(h.data(), h.size());
      rs.clear();
      drain(h1, &rs);
      CHECK(rs.front() == result::garbled);
    }
  }
}

TEST_CASE("a message split across reads is reassembled, byte by byte too",
          "[fix][framer]") {
  fix_framer f(4096);
  const std::string s = logon + order;
  std::vector<std::string> got;
  for (char c : s) {
    REQUIRE(f.feed(&c, 1) == 1);
    for (auto& m : drain(f))
      got.push_back(m);
  }
  REQUIRE(got.size() == 2);
  CHECK(got[0] == logon);
  CHECK(got[1] == order);
  CHECK(f.buffered() == 0);
  CHECK(f.discarded() == 0);

  SECTION("in two halves through the read buffer") {
    fix_framer g(4096);
    size_t half = order.size() / 2;
    std::memcpy(g.space(), order.data(), half);
    g.commit(half);
    CHECK(drain(g).empty());
    CHECK(g.buffered() == half);
    std::memcpy(g.space(), order.data() + half, order.size() - half);
    g.commit(order.size() - half);
    auto two = drain(g);
    REQUIRE(two.size() == 1);
    CHECK(two[0] == order);
  }
}

TEST_CASE("several messages in one read all come out, in order", "[fix][framer]") {
  fix_framer f(4096);
  std::string s = logon;
  for (int i = 0; i < 10; ++i)
    s += order;
  s += order.substr(0, 20); // and the start of one more
  REQUIRE(f.feed(s.data(), s.size()) == s.size());
  auto got = drain(f);
  REQUIRE(got.size() == 11);
  CHECK(got[0] == logon);
  for (int i = 1; i < 11; ++i)
    CHECK(got[i] == order);
  CHECK(f.buffered() == 20);
  // The kept start moves to the front of the buffer; the rest completes it.
  std::string rest = order.substr(20);
  REQUIRE(f.feed(rest.data(), rest.size()) == rest.size());
  auto last = drain(f);
  REQUIRE(last.size() == 1);
  CHECK(last[0] == order);
}

TEST_CASE("a capacity raised after logon admits a larger message", "[fix][framer]") {
  std::string big = frame("35=D\00158=" + std::string(6000, 'a') + "\001");
  fix_framer f(4096);
  CHECK(f.feed(big.data(), big.size()) == 4096); // the buffer takes no more
  f.set_capacity(65536);
  std::vector<result> rs;
  CHECK(drain(f, &rs).empty());
  CHECK(rs.back() == result::need_more);
  f.feed(big.data() + 4096, big.size() - 4096);
  auto got = drain(f);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == big);
}

TEST_CASE("random reads of messages and garbage yield every message in order, "
          "within the buffer",
          "[fix][framer][property]") {
  const auto seed = std::random_device{}();
  INFO("seed " << seed);
  std::printf("fix_framer property seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    std::string stream;
    std::vector<std::string> sent;
    for (int i = 0; i < 200; ++i) {
      if (rng() % 4 == 0) // garbage with no '8' in it cannot hide a message
        stream += std::string(rng() % 300, "xyz\001="[rng() % 5]);
      std::string m = frame("35=D\00111=c" + std::to_string(i) + "\00158="
                            + std::string(rng() % 2000, 'a') + "\001");
      sent.push_back(m);
      stream += m;
    }
    fix_framer f(4096);
    std::vector<std::string> got;
    size_t at = 0;
    while (at < stream.size()) {
      size_t n = std::min<size_t>({stream.size() - at, f.space_size(),
                                   1 + rng() % 5000});
      std::memcpy(f.space(), stream.data() + at, n);
      f.commit(n);
      at += n;
      REQUIRE(f.buffered() <= f.capacity());
      for (auto& m : drain(f))
        got.push_back(m);
    }
    REQUIRE(got.size() == sent.size());
    for (size_t i = 0; i < sent.size(); ++i)
      REQUIRE(got[i] == sent[i]);
  }
}
