// SPDX-License-Identifier: Apache-2.0
// Fuzzes command-line overrides: the whole input as one `--set`, then its
// lines as several. Each yields settings that still render and parse back,
// or an invalid_config error that leaves the settings unchanged.

#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "keylane/config_loader.hpp"

namespace {

using namespace keylane;

void check(const std::vector<std::string>& assignments) {
  settings s;
  auto before = to_toml(s);
  if (auto err = apply_overrides(s, assignments)) {
    fuzz::require_error(err, errc::invalid_config, "apply_overrides");
    if (to_toml(s) != before)
      fuzz::fail("a failed override changed the settings");
    return;
  }
  auto text = to_toml(s);
  auto back = parse(text, s.origin);
  if (!back)
    fuzz::fail("settings after --set do not render as valid TOML: "
               + render(back.error()) + "\n" + text);
  if (to_toml(*back) != text)
    fuzz::fail("settings after --set differ after a round trip:\n" + text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto text = fuzz::as_text(data, size);
  check({std::string{text}});
  std::vector<std::string> lines;
  for (size_t at = 0; at <= text.size() && lines.size() < 8;) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos)
      end = text.size();
    lines.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (lines.size() > 1)
    check(lines);
  return 0;
}
