// SPDX-License-Identifier: Apache-2.0
// The spill file behind `sink.spill_path`: opened with the runtime, so a
// bad directory or a type without codecs fails the start; admission is held
// while the file is full.

#include "keylane/detail/engine.hpp"

namespace keylane::detail {

caf::error engine::open_spill() {
  if (cfg_.spill_path.empty())
    return caf::none;
  if (!ops_.spills)
    return make_error(errc::invalid_config,
                      "sink.spill_path = \"" + cfg_.spill_path
                        + "\" needs a keylane::codec for the payload and the "
                          "result types (declare inspect() next to each type; "
                          "see codec.hpp)");
  auto f = spill_file::open(cfg_.spill_path);
  if (!f)
    return std::move(f.error());
  spill_ = std::move(*f);
  return caf::none;
}

} // namespace keylane::detail
