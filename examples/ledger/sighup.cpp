// SPDX-License-Identifier: Apache-2.0
#include "sighup.hpp"

#include <iostream>
#include <sstream>
#include <string>

#include <keylane/errc.hpp>
#include <keylane/reload.hpp>

namespace ledger {

namespace {

// The runtime's own wording, so a line reads the same whoever printed it.
std::string describe(const keylane::setting_change& c) {
  return c.key + " = " + (c.before.empty() ? "(unset)" : c.before) + " -> "
         + (c.after.empty() ? "(unset)" : c.after);
}

bool is(const caf::error& err, keylane::errc code) {
  return err.category() == caf::atom("keylane")
         && err.code() == static_cast<uint8_t>(code);
}

// One write per message, so it does not interleave with the runtime's log.
void say(const std::string& text) {
  std::cerr << text << std::flush;
}

} // namespace

void reload_on_sighup(const settings_source& src, live_lanes& live) {
  if (!src.config) {
    say("ledger: SIGHUP: no --config file to reload (the settings are "
        "built in); nothing changed\n");
    return;
  }
  keylane::settings next;
  auto problems = read_settings(src, next);
  if (!problems.empty()) {
    std::string out;
    for (const auto& p : problems)
      out += "ledger: SIGHUP: reload refused, running config kept: " + p
             + "\n";
    say(out);
    return;
  }
  std::string origin = next.origin;
  bool running = live.visit([&](ledger_runtime& rt) {
    auto rep = rt.reload(std::move(next));
    if (!rep) {
      // Refused settings are logged by the runtime; a stopped one says
      // nothing.
      if (is(rep.error(), keylane::errc::stopped))
        say("ledger: SIGHUP: " + keylane::render(rep.error()) + "\n");
      return;
    }
    // Say what the runtime's log.level kept it from saying (applied keys
    // are logged at info, restart-only ones at warning).
    auto level = rt.config().log;
    std::ostringstream out;
    if (level < keylane::log_level::info) {
      for (const auto& c : rep->applied)
        out << "ledger: reload from " << origin << ": " << describe(c)
            << '\n';
      if (rep->applied.empty())
        out << "ledger: reload from " << origin
            << ": no run-time key changed\n";
    }
    if (level < keylane::log_level::warning)
      for (const auto& c : rep->needs_restart)
        out << "ledger: reload from " << origin << ": " << describe(c)
            << " takes effect only at restart\n";
    say(out.str());
  });
  if (!running)
    say("ledger: SIGHUP: no keylane runtime is running at the moment (the "
        "baselines run without one); nothing reloaded\n");
}

} // namespace ledger
