// SPDX-License-Identifier: Apache-2.0
// Fuzzes keylane::codec<T>::decode, which turns a parked record's payload
// bytes (a BLOB of the park store) back into the payload when an operator
// lists or replays it: any bytes yield a payload or a codec_failed error,
// and a decoded payload encodes to bytes that decode to the same payload.
// The first byte picks the payload type; the rest are the payload.

#include <cmath>
#include <cstring>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "keylane/codec.hpp"

namespace {

/// A payload as applications write them: CAF's `inspect` over scalars,
/// strings and containers.
struct transfer {
  std::string account;
  int64_t cents = 0;
  double rate = 0;
  bool urgent = false;
  std::vector<std::string> tags;
  std::map<std::string, int32_t> limits;

  friend bool operator==(const transfer& a, const transfer& b) {
    return a.account == b.account && a.cents == b.cents
           && std::memcmp(&a.rate, &b.rate, sizeof a.rate) == 0 // NaN too
           && a.urgent == b.urgent && a.tags == b.tags && a.limits == b.limits;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, transfer& x) {
  return f(x.account, x.cents, x.rate, x.urgent, x.tags, x.limits);
}

template <class T>
void round_trip(std::string_view bytes) {
  using codec = keylane::codec<T>;
  auto x = codec::decode(bytes);
  if (!x) {
    keylane::fuzz::require_error(x.error(), keylane::errc::codec_failed,
                                 "codec::decode");
    return;
  }
  auto encoded = codec::encode(*x);
  if (!encoded)
    keylane::fuzz::fail("a decoded payload does not encode: "
                        + keylane::render(encoded.error()));
  auto again = codec::decode(*encoded);
  if (!again || !(*again == *x))
    keylane::fuzz::fail("a payload changed in an encode/decode round trip");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  auto bytes = keylane::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: round_trip<std::string>(bytes); break;
    case 1: round_trip<std::vector<int64_t>>(bytes); break;
    case 2: round_trip<std::map<std::string, std::string>>(bytes); break;
    default: round_trip<transfer>(bytes); break;
  }
  return 0;
}
