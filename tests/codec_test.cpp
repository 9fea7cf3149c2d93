// SPDX-License-Identifier: Apache-2.0
// The default payload codec: floating-point numbers come back bit for bit,
// and every byte CAF's own format got right stays the same, so stores
// written before read the same.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <random>
#include <vector>

#include <caf/binary_serializer.hpp>

#include "keylane/codec.hpp"

namespace {

struct quote {
  std::string symbol;
  double price = 0;
  float size = 0;
  std::vector<double> levels;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, quote& x) {
  return f(caf::meta::type_name("quote"), x.symbol, x.price, x.size, x.levels);
}

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Encodes on another thread: CAF's packing of an infinity never returned,
// and a hang must fail the run with a message, not stall it.
caf::expected<std::string> encode_or_die(const quote& q) {
  auto f = std::async(std::launch::async,
                      [&] { return keylane::codec<quote>::encode(q); });
  if (f.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: encoding price %g did not finish in 20 s\n",
                 q.price);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return f.get();
}

} // namespace

TEST_CASE("the default codec brings back infinities, NaN, subnormals and signed zeros bit for bit",
          "[codec]") {
  using lim = std::numeric_limits<double>;
  std::vector<double> specials{lim::infinity(),  -lim::infinity(),
                               lim::quiet_NaN(), -lim::quiet_NaN(),
                               lim::denorm_min(), -lim::denorm_min() * 7,
                               lim::min() / 3,   -0.0,
                               0.0,              lim::max(),
                               lim::lowest(),    101.25};
  for (auto d : specials) {
    quote q{"EURUSD", d, static_cast<float>(d), {d, -d}};
    auto bytes = encode_or_die(q);
    REQUIRE(bytes);
    auto back = keylane::codec<quote>::decode(*bytes);
    REQUIRE(back);
    INFO("price " << d);
    CHECK(back->symbol == "EURUSD");
    CHECK(bits_of(back->price) == bits_of(d));
    CHECK(bits_of(back->size) == bits_of(static_cast<float>(d)));
    REQUIRE(back->levels.size() == 2);
    CHECK(bits_of(back->levels[0]) == bits_of(d));
    CHECK(bits_of(back->levels[1]) == bits_of(-d));
  }
}

TEST_CASE("the default codec writes normal numbers byte for byte as CAF's binary format did",
          "[codec]") {
  std::mt19937_64 rng{42};
  for (int i = 0; i < 20000; ++i) {
    uint64_t b = rng();
    double d;
    std::memcpy(&d, &b, sizeof d);
    if (!std::isnormal(d) || !std::isnormal(static_cast<float>(d)))
      continue;
    quote q{"X", d, static_cast<float>(d), {d}};
    std::vector<char> caf_bytes;
    caf::binary_serializer caf_out{nullptr, caf_bytes};
    REQUIRE_FALSE(caf_out(q));
    auto ours = keylane::codec<quote>::encode(q);
    REQUIRE(ours);
    REQUIRE(*ours == std::string(caf_bytes.begin(), caf_bytes.end()));
  }
}
