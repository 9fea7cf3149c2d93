// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/detail/reorder_buffer.hpp"
#include "keylane/detail/actor_parts.hpp"
#include "keylane/detail/spill_file.hpp"
#include "keylane/detail/window_sizer.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {


/// Puts finished events in global order and hands them to the output
/// queue: a `reorder_buffer` indexed by sequence number; every accepted
/// number arrives exactly once (failed and skipped events as tombstones),
/// so the buffer never waits for a number that will not come. Its size is
/// bounded by the window, because ingress admits at most `window`
/// undelivered events. Under `per_key` and `none` no event passes through
/// it (shards and the supervisor hand theirs to the output themselves): it
/// sizes an automatic window from the shards' measures, and answers the
/// stall log.
class sink : public caf::event_based_actor {
public:
  sink(caf::actor_config& cfg, const sink_parts& parts);

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.sink"; }

private:
  void take(event_batch& b);
  void release_ready();
  void publish();
  // Stall log (sink_stall.cpp).
  void watch();
  void check_stall();
  void on_located(uint64_t seq, const key& k, const std::string& where,
                  int64_t submitted_ns);
  void end_stall();
  // Automatic window (sink_window.cpp).
  void configure_window(const settings& s);
  void measure(const event_batch& b);
  void arm_sizing();
  void on_window_tick();
  // Spill (sink_spill.cpp).
  bool spill_out(event_ptr& ev);
  event_ptr spill_in();
  void after_release();
  [[nodiscard]] uint64_t holding() const noexcept {
    return reorder_.held() + spill_.spilled.size();
  }

  sink_parts parts_;
  size_t stall_ms_;
  // Results waiting for their turn (owned; `on_exit` abandons them), and
  // the awaited number.
  reorder_buffer<event_base*> reorder_{order_mode::global};
  struct outcome_counts {
    uint64_t ok = 0, skipped = 0, failed = 0, parked = 0, retries = 0;
  } counts_;
  std::vector<event_base*> ready_;

  // Stall log: the supervisor locates a stalled event; `stalled` is the
  // sequence number a stall was declared for (none_ when output flows).
  static constexpr uint64_t none_ = UINT64_MAX;
  caf::actor supervisor_;
  struct stall_watch {
    clock::time_point since; // when waiting for `reorder_.next()` began
    bool watching = false;   // a check is scheduled
    uint64_t stalled = none_;
    bool located = false;    // the stall line named its key
    bool unlocated = false;  // the stall line could not name it
    std::string key;
  } stall_;

  // `window = "auto"`: the sink measures and resizes the admission window.
  bool auto_window_ = false;
  bool sizing_ = false; // a resize tick is scheduled
  size_t window_floor_ = 1;
  size_t window_max_ = 0;
  window_sizer sizer_;

  // `sink.spill_path`: results beyond `memory_window` of the awaited
  // number go to the spill file; `spilled` maps their numbers to where.
  struct spilled_at {
    uint64_t offset;
    uint32_t len;
    keylane::key k;
  };
  struct spill_state {
    spill_file* file = nullptr;
    size_t memory_window = 0;
    size_t max_bytes = 0;
    std::map<uint64_t, spilled_at> spilled;
    uint64_t total = 0;
    uint64_t peak_held = 0;
    bool admission_held = false;
    bool error_logged = false;
    uint64_t write_failures = 0; // in all
    uint64_t failed_in_row = 0;  // since the last write that worked
  } spill_;
};

} // namespace keylane::detail
