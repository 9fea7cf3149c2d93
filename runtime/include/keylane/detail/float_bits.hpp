#pragma once

#include <cstdint>
#include <cstring>
#include <string>
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
// binary format, through the wrapped serializer.

/// CAF's binary serializer, with floating-point numbers written as their
/// bits. Not for concurrent use.
class float_bits_serializer final : public caf::serializer {
public:
  explicit float_bits_serializer(std::vector<char>& buf)
    : caf::serializer(nullptr), inner_(nullptr, buf) {}

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
  caf::error apply_impl(float& x) override {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return inner_(bits);
  }
  caf::error apply_impl(double& x) override {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return inner_(bits);
  }
  caf::error apply_impl(long double& x) override { return inner_(x); }
  caf::error apply_impl(std::string& x) override { return inner_(x); }
  caf::error apply_impl(std::u16string& x) override { return inner_(x); }
  caf::error apply_impl(std::u32string& x) override { return inner_(x); }

private:
  caf::binary_serializer inner_;
};

/// Reads what `float_bits_serializer` wrote. Not for concurrent use.
class float_bits_deserializer final : public caf::deserializer {
public:
  float_bits_deserializer(const char* data, size_t size)
    : caf::deserializer(nullptr), inner_(nullptr, data, size) {}

  /// Bytes not read yet.
  [[nodiscard]] size_t remaining() const noexcept { return inner_.remaining(); }

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
  caf::error apply_impl(float& x) override {
    uint32_t bits = 0;
    auto err = inner_(bits);
    std::memcpy(&x, &bits, sizeof bits);
    return err;
  }
  caf::error apply_impl(double& x) override {
    uint64_t bits = 0;
    auto err = inner_(bits);
    std::memcpy(&x, &bits, sizeof bits);
    return err;
  }
  caf::error apply_impl(long double& x) override { return inner_(x); }
  caf::error apply_impl(std::string& x) override { return inner_(x); }
  caf::error apply_impl(std::u16string& x) override { return inner_(x); }
  caf::error apply_impl(std::u32string& x) override { return inner_(x); }

private:
  caf::binary_deserializer inner_;
};

} // namespace keylane::detail
