// SPDX-License-Identifier: Apache-2.0
// keylane::kafka's entry point for the core (see detail/state_components.hpp,
// which this file must not include: the definition here must be strong):
// the changelog topic as a read-only state store, for keylane-state.
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "changelog_store.hpp"
#include "keylane/errc.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

caf::expected<std::unique_ptr<state_store>>
component_open_changelog(const std::string& bootstrap,
                         const std::string& topic);

namespace {

/// A snapshot of the changelog's states in memory; writes refused.
class changelog_snapshot final : public state_store {
public:
  changelog_snapshot(std::unique_ptr<state_store> mem, std::string what)
    : mem_(std::move(mem)), what_(std::move(what)) {}
  caf::expected<std::optional<std::string>> read(const key& k) override {
    return mem_->read(k);
  }
  caf::error write(const std::vector<state_entry>&, bool) override {
    return refused();
  }
  caf::expected<bool> erase(const key&) override { return refused(); }
  caf::error
  scan(const std::function<bool(const key&, std::string_view)>& fn) override {
    return mem_->scan(fn);
  }
  std::string describe() const override { return what_; }

private:
  caf::error refused() const {
    return make_error(errc::state_store_failed,
                      what_ + " is read here, never written: erase a key's "
                              "state in the members' runtime instead");
  }
  std::unique_ptr<state_store> mem_;
  std::string what_;
};

} // namespace

caf::expected<std::unique_ptr<state_store>>
component_open_changelog(const std::string& bootstrap,
                         const std::string& topic) {
  kafka::source_settings s;
  s.bootstrap_servers = bootstrap;
  s.changelog_topic = topic;
  s.group = "keylane-state";
  s.origin = "kafka:" + bootstrap + "/" + topic;
  s.properties["log_level"] = "2";
  // A changelog store on a memory store, restored partition by partition:
  // the members' own restore, into a store that is thrown away.
  auto cs = kafka::changelog_store::open(s, make_memory_state_store(), "");
  if (!cs)
    return std::move(cs.error());
  for (int32_t p = 0; p < (*cs)->partitions(); ++p)
    if (auto got = (*cs)->restore(p); !got)
      return std::move(got.error());
  return std::unique_ptr<state_store>{new changelog_snapshot(
    kafka::share(std::shared_ptr<kafka::changelog_store>{std::move(*cs)}),
    "changelog topic " + topic + " at " + bootstrap)};
}

} // namespace keylane::detail

// The anchor keylane::kafka's link options name, so the linker takes this
// file (and the entry point above) from the archive.
extern "C" void keylane_component_kafka() {}
