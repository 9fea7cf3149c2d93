// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>

#include "keylane/config.hpp"

namespace keylane::detail {

/// The delay before the next attempt after `failed` failed attempts
/// (`failed >= 1`): min(max_backoff, initial * multiplier^(failed-1)), or,
/// with full jitter, a point drawn uniformly from [0, that] by
/// `random_bits` (64 uniformly random bits).
[[nodiscard]] std::chrono::microseconds
backoff_delay(const settings& cfg, uint32_t failed, uint64_t random_bits);

/// The capped exponential delay itself (the upper bound of any draw).
[[nodiscard]] std::chrono::microseconds
backoff_cap(const settings& cfg, uint32_t failed);

/// A small fast generator (splitmix64) for jitter draws.
class jitter_rng {
public:
  explicit jitter_rng(uint64_t seed) noexcept : state_(seed) {}
  uint64_t operator()() noexcept {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

private:
  uint64_t state_;
};

} // namespace keylane::detail
