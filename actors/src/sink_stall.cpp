// SPDX-License-Identifier: Apache-2.0
// The stall log (global order): when output has waited `log.stall_ms` for
// one sequence number while later results are held back, the sink asks the
// supervisor where that event is and logs one line naming its key, its age
// and what holds it; and one line when it reaches the sink. A timer runs
// only while results are held back.

#include <string>

#include <caf/all.hpp>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/seconds_text.hpp"
#include "keylane/detail/sink.hpp"

namespace keylane::detail {

void sink::watch() {
  if (stall_ms_ == 0 || holding() == 0 || stall_.watching || !supervisor_)
    return;
  stall_.watching = true;
  auto due = stall_.since + std::chrono::milliseconds(stall_ms_) - clock::now();
  if (due < std::chrono::milliseconds(1))
    due = std::chrono::milliseconds(1);
  delayed_send(this, std::chrono::duration_cast<caf::timespan>(due),
               stall_atom::value);
}

void sink::check_stall() {
  stall_.watching = false;
  if (holding() == 0 || stall_ms_ == 0)
    return;
  auto threshold = std::chrono::milliseconds(stall_ms_);
  auto waited = clock::now() - stall_.since;
  if (waited < threshold) {
    watch();
    return;
  }
  auto awaited = reorder_.next();
  if (stall_.stalled != awaited) {
    stall_.stalled = awaited;
    stall_.located = false;
    stall_.unlocated = false;
  } else if (!stall_.located && !stall_.unlocated) {
    // A whole period without an answer: no lane or queue holds it.
    stall_.unlocated = true;
    parts_.log.write(log_level::warning,
                      "stall: output waits for seq " + std::to_string(awaited)
                        + " for " + seconds_text(waited) + " with "
                        + std::to_string(holding())
                        + " later results held back; no lane holds it "
                          "(it is still in ingress or on its way)");
  }
  // Ask (again) until someone answers: it may reach a lane meanwhile.
  if (!stall_.located)
    send(supervisor_, locate_atom::value, awaited);
  stall_.watching = true;
  delayed_send(this, std::chrono::duration_cast<caf::timespan>(threshold),
               stall_atom::value);
}

void sink::on_located(uint64_t seq, const key& k, const std::string& where,
                      int64_t submitted_ns) {
  if (seq != stall_.stalled || stall_.located)
    return;
  stall_.located = true;
  stall_.key = k.to_string();
  auto now = clock::now();
  auto age = now.time_since_epoch() - std::chrono::nanoseconds{submitted_ns};
  parts_.log.write(log_level::warning,
                    "stall: output waits for seq " + std::to_string(seq)
                      + " (key " + stall_.key + ") for "
                      + seconds_text(now - stall_.since) + ", submitted "
                      + seconds_text(age) + " ago, "
                      + std::to_string(holding())
                      + " later results held back: " + where);
}

void sink::end_stall() {
  if (stall_.located || stall_.unlocated)
    parts_.log.write(log_level::warning,
                      "stall cleared: seq " + std::to_string(stall_.stalled)
                        + (stall_.located ? " (key " + stall_.key + ")" : "")
                        + " reached the output after "
                        + seconds_text(clock::now() - stall_.since));
  stall_.stalled = none_;
  stall_.located = false;
  stall_.unlocated = false;
  stall_.key.clear();
}

} // namespace keylane::detail
