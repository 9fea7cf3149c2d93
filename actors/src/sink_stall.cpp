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
  if (stall_ms_ == 0 || holding() == 0 || watching_ || !supervisor_)
    return;
  watching_ = true;
  auto due = since_ + std::chrono::milliseconds(stall_ms_) - clock::now();
  if (due < std::chrono::milliseconds(1))
    due = std::chrono::milliseconds(1);
  delayed_send(this, std::chrono::duration_cast<caf::timespan>(due),
               stall_atom::value);
}

void sink::check_stall() {
  watching_ = false;
  if (holding() == 0 || stall_ms_ == 0)
    return;
  auto threshold = std::chrono::milliseconds(stall_ms_);
  auto waited = clock::now() - since_;
  if (waited < threshold) {
    watch();
    return;
  }
  auto awaited = reorder_.next();
  if (stalled_ != awaited) {
    stalled_ = awaited;
    located_ = false;
    unlocated_ = false;
  } else if (!located_ && !unlocated_) {
    // A whole period without an answer: no lane or queue holds it.
    unlocated_ = true;
    parts_.log.write(log_level::warning,
                      "stall: output waits for seq " + std::to_string(awaited)
                        + " for " + seconds_text(waited) + " with "
                        + std::to_string(holding())
                        + " later results held back; no lane holds it "
                          "(it is still in ingress or on its way)");
  }
  // Ask (again) until someone answers: it may reach a lane meanwhile.
  if (!located_)
    send(supervisor_, locate_atom::value, awaited);
  watching_ = true;
  delayed_send(this, std::chrono::duration_cast<caf::timespan>(threshold),
               stall_atom::value);
}

void sink::on_located(uint64_t seq, const key& k, const std::string& where,
                      int64_t submitted_ns) {
  if (seq != stalled_ || located_)
    return;
  located_ = true;
  stalled_key_ = k.to_string();
  auto now = clock::now();
  auto age = now.time_since_epoch() - std::chrono::nanoseconds{submitted_ns};
  parts_.log.write(log_level::warning,
                    "stall: output waits for seq " + std::to_string(seq)
                      + " (key " + stalled_key_ + ") for "
                      + seconds_text(now - since_) + ", submitted "
                      + seconds_text(age) + " ago, "
                      + std::to_string(holding())
                      + " later results held back: " + where);
}

void sink::end_stall() {
  if (located_ || unlocated_)
    parts_.log.write(log_level::warning,
                      "stall cleared: seq " + std::to_string(stalled_)
                        + (located_ ? " (key " + stalled_key_ + ")" : "")
                        + " reached the output after "
                        + seconds_text(clock::now() - since_));
  stalled_ = none_;
  located_ = false;
  unlocated_ = false;
  stalled_key_.clear();
}

} // namespace keylane::detail
