// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/serializer.hpp>

namespace keylane::detail {

// CAF 0.17's binary serializer packs floating-point numbers with its own
// IEEE 754 routine, which loops forever on an infinity, turns NaN into -1
// and corrupts subnormals. For every normal number and zero it writes the
// IEEE bits in network byte order, so writing those bits ourselves changes
// no byte CAF wrote correctly and fixes the rest. Everything else is CAF's
// binary format, through the wrapped processor.

/// CAF's binary processor `Inner` (serializer or deserializer) behind the
/// interface `Base`, with floating-point numbers passed as their bits. Not
/// for concurrent use.
template <class Base, class Inner>
class float_bits_processor final : public Base {
public:
  template <class... Ts>
  explicit float_bits_processor(Ts&&... xs)
    : Base(nullptr), inner_(nullptr, std::forward<Ts>(xs)...) {}

  [[nodiscard]] Inner& inner() noexcept { return inner_; }

  caf::error begin_object(uint16_t& nr, std::string& name) override {
    return inner_.begin_object(nr, name);
  }
  caf::error end_object() override { return inner_.end_object(); }
  caf::error begin_sequence(size_t& n) override {
    return inner_.begin_sequence(n);
  }
  caf::error end_sequence() override { return inner_.end_sequence(); }
  caf::error apply_raw(size_t n, void* data) override {
    return inner_.apply_raw(n, data);
  }

protected:
  caf::error apply_impl(int8_t& x) override { return inner_(x); }
  caf::error apply_impl(uint8_t& x) override { return inner_(x); }
  caf::error apply_impl(int16_t& x) override { return inner_(x); }
  caf::error apply_impl(uint16_t& x) override { return inner_(x); }
  caf::error apply_impl(int32_t& x) override { return inner_(x); }
  caf::error apply_impl(uint32_t& x) override { return inner_(x); }
  caf::error apply_impl(int64_t& x) override { return inner_(x); }
  caf::error apply_impl(uint64_t& x) override { return inner_(x); }
  caf::error apply_impl(float& x) override { return as_bits<uint32_t>(x); }
  caf::error apply_impl(double& x) override { return as_bits<uint64_t>(x); }
  caf::error apply_impl(long double& x) override { return inner_(x); }
  caf::error apply_impl(std::string& x) override { return inner_(x); }
  caf::error apply_impl(std::u16string& x) override { return inner_(x); }
  caf::error apply_impl(std::u32string& x) override { return inner_(x); }

private:
  // Copies in both directions, so one body serves writing (the copy back
  // changes nothing) and reading (the copy in is overwritten).
  template <class Bits, class Float>
  caf::error as_bits(Float& x) {
    static_assert(sizeof(Bits) == sizeof(Float), "bits must match the float");
    Bits bits;
    std::memcpy(&bits, &x, sizeof bits);
    auto err = inner_(bits);
    std::memcpy(&x, &bits, sizeof bits);
    return err;
  }

  Inner inner_;
};

/// Writes what `codec<T>::encode` returns.
using float_bits_serializer =
  float_bits_processor<caf::serializer, caf::binary_serializer>;

/// Reads what `float_bits_serializer` wrote.
using float_bits_deserializer =
  float_bits_processor<caf::deserializer, caf::binary_deserializer>;

} // namespace keylane::detail
