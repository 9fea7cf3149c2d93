// SPDX-License-Identifier: Apache-2.0
// Fuzzes the to_toml round trip: settings that parse from any text render
// as TOML that parses back to settings rendering the same text.

#include "fuzz_check.hpp"
#include "keylane/config_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keylane;
  auto first = parse(fuzz::as_text(data, size), "fuzz.toml");
  if (!first)
    return 0;
  auto text = to_toml(*first);
  auto second = parse(text, "fuzz.toml");
  if (!second)
    fuzz::fail("to_toml output does not parse: " + render(second.error())
               + "\n" + text);
  if (auto again = to_toml(*second); again != text)
    fuzz::fail("to_toml differs after a round trip:\n" + text + "\n---\n"
               + again);
  return 0;
}
