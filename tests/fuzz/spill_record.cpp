// SPDX-License-Identifier: Apache-2.0
// Fuzzes decode_spill, the reader of the sink's spill file records: any
// bytes yield a record or a spill_failed error, and a record decoded once
// encodes to bytes that decode to the same record.

#include "fuzz_check.hpp"
#include "keylane/detail/spill_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keylane;
  auto r = detail::decode_spill(fuzz::as_text(data, size));
  if (!r) {
    fuzz::require_error(r.error(), errc::spill_failed, "decode_spill");
    return 0;
  }
  auto bytes = detail::encode(*r);
  auto again = detail::decode_spill(bytes);
  if (!again)
    fuzz::fail("an encoded record does not decode: " + render(again.error()));
  if (detail::encode(*again) != bytes)
    fuzz::fail("a record changed in an encode/decode round trip");
  return 0;
}
