// SPDX-License-Identifier: Apache-2.0
#include "keylane/handler_registry.hpp"

namespace keylane {

void handler_registry::add(std::string name, std::type_index p,
                           std::type_index r, handler_factory f) {
  entries_.insert_or_assign(std::move(name), entry{p, r, std::move(f)});
}

caf::expected<handler_factory>
handler_registry::find(const std::string& name, std::type_index p,
                       std::type_index r) const {
  auto i = entries_.find(name);
  if (i == entries_.end()) {
    std::string known;
    for (auto& [n, e] : entries_)
      known += (known.empty() ? "" : ", ") + n;
    return make_error(errc::unknown_handler,
                      "handler.name = \"" + name
                        + "\": no handler registered under this name (known: "
                        + (known.empty() ? "none" : known) + ")");
  }
  if (i->second.payload != p || i->second.result != r)
    return make_error(errc::unknown_handler,
                      "handler \"" + name
                        + "\" takes other payload or result types than this "
                          "runtime");
  return i->second.make;
}

std::vector<std::string> handler_registry::names() const {
  std::vector<std::string> out;
  for (auto& [n, e] : entries_)
    out.push_back(n);
  return out;
}

} // namespace keylane
