// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/sink.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "keylane/detail/counters.hpp"
#include "keylane/detail/live_settings.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/stop_ledger.hpp"

namespace keylane::detail {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           clock::now().time_since_epoch())
    .count();
}

} // namespace

sink::sink(caf::actor_config& cfg, const sink_parts& parts)
  : caf::event_based_actor(cfg),
    parts_(parts),
    stall_ms_(parts.cfg.stall_ms) {
  parts_.ledger.watch(*this);
  stall_.since = clock::now();
  configure_window(parts.cfg);
  spill_.file = parts.spill;
  spill_.memory_window = parts.cfg.window;
  spill_.max_bytes = parts.cfg.spill_max_bytes;
  parts_.pub.awaited_since_ns.store(now_ns(), std::memory_order_relaxed);
}

caf::behavior sink::make_behavior() {
  return {
    [this](events_atom, batch_ptr& b) { take(*b); },
    [this](measure_atom, std::vector<int64_t>& took) {
      if (!auto_window_)
        return;
      for (auto ns : took)
        sizer_.record(std::chrono::nanoseconds{ns});
      arm_sizing();
    },
    [this](reload_atom, settings_ptr& live) {
      stall_ms_ = live->stall_ms;
      spill_.memory_window = live->window;
      configure_window(*live);
      watch();
    },
    [this](window_atom) { on_window_tick(); },
    [this](supervisor_atom, caf::actor& sup) { supervisor_ = std::move(sup); },
    [this](stall_atom) { check_stall(); },
    [this](located_atom, uint64_t seq, const key& k, const std::string& where,
           int64_t submitted_ns) { on_located(seq, k, where, submitted_ns); },
  };
}

void sink::take(event_batch& b) {
  if (auto_window_)
    measure(b);
  for (auto& ev : b.items) {
    switch (ev->status) {
      case outcome::ok: ++counts_.ok; break;
      case outcome::skipped: ++counts_.skipped; break;
      case outcome::parked: ++counts_.parked; break;
      default: ++counts_.failed; break;
    }
    if (ev->attempts > 1)
      counts_.retries += ev->attempts - 1;
    auto seq = ev->seq;
    if (spill_.file && seq - reorder_.next() >= spill_.memory_window
        && spill_out(ev))
      continue;
    // Held even when it is the awaited one: the peak counts the batch.
    reorder_.put(seq, ev.release());
  }
  b.items.clear();
  release_ready();
  watch();
  // Publish before emitting: whoever sees an event out must see it counted.
  publish();
  if (!ready_.empty()) {
    if (parts_.live.record_latency()) {
      // One clock read per batch: its events leave together.
      auto now = clock::now();
      auto& latency = parts_.pub.latency;
      for (auto* ev : ready_)
        latency.record(now - ev->submitted);
    }
    parts_.out.emit(ready_.data(), ready_.size());
    ready_.clear();
  }
}

void sink::release_ready() {
  auto before = reorder_.next();
  for (;;) {
    reorder_.release(ready_);
    // The awaited number is in the spill file: read it back in its turn
    // (or report it lost) and go on past it.
    if (spill_.spilled.empty()
        || spill_.spilled.begin()->first != reorder_.next())
      break;
    reorder_.skip();
    if (auto ev = spill_in())
      ready_.push_back(ev.release());
  }
  if (spill_.file)
    after_release();
  if (reorder_.next() != before) {
    if (stall_.stalled != none_)
      end_stall(); // before `stall_.since` moves: the line says how long it was
    stall_.since = clock::now();
    parts_.pub.awaited_since_ns.store(now_ns(),
                                            std::memory_order_relaxed);
  }
}

void sink::publish() {
  auto& c = parts_.pub;
  c.sink_buffered.store(reorder_.held(), std::memory_order_relaxed);
  c.peak_sink_buffered.store(reorder_.peak(), std::memory_order_relaxed);
  c.awaited_seq.store(reorder_.next(), std::memory_order_relaxed);
  c.ok.store(counts_.ok, std::memory_order_relaxed);
  c.skipped.store(counts_.skipped, std::memory_order_relaxed);
  c.failed.store(counts_.failed, std::memory_order_relaxed);
  c.parked.store(counts_.parked, std::memory_order_relaxed);
  c.retries.store(counts_.retries, std::memory_order_relaxed);
  if (spill_.file) {
    c.spilled.store(spill_.total, std::memory_order_relaxed);
    c.spill_held.store(spill_.spilled.size(), std::memory_order_relaxed);
    c.spill_bytes.store(spill_.file->size(), std::memory_order_relaxed);
    c.peak_spill_held.store(spill_.peak_held, std::memory_order_relaxed);
    c.spill_write_failures.store(spill_.write_failures,
                                 std::memory_order_relaxed);
  }
}

void sink::on_exit() {
  std::vector<event_base*> held;
  reorder_.drain(held);
  for (auto* ev : held)
    parts_.ledger.abandon(event_ptr{ev}, "completed");
  for (auto& [seq, at] : spill_.spilled)
    parts_.ledger.abandon(seq, at.k, "completed");
  spill_.spilled.clear();
  for (auto* ev : ready_)
    parts_.ledger.abandon(event_ptr{ev}, "completed");
  ready_.clear();
  supervisor_ = nullptr;
}

} // namespace keylane::detail
