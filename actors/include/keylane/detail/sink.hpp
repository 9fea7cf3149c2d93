#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/messages.hpp"

namespace keylane::detail {

class engine;

/// Puts finished events in output order and hands them to the engine's
/// output queue. `global`: a reorder buffer indexed by sequence number;
/// every accepted number arrives exactly once (failed and skipped events as
/// tombstones), so the buffer never waits for a number that will not come.
/// Its size is bounded by the window, because ingress admits at most
/// `window` undelivered events. `per_key` and `none`: lanes already send a
/// key's events in order (one lane at a time per key, and a lane's results
/// reach the sink before it retires), so events pass straight through.
class sink : public caf::event_based_actor {
public:
  sink(caf::actor_config& cfg, engine* eng);

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.sink"; }

private:
  void take(event_batch& b);
  void release_ready();
  void publish();

  engine* eng_;
  order_mode order_;
  size_t stall_ms_;
  uint64_t next_ = 0;                // global: the awaited sequence number
  std::deque<event_base*> pending_;  // global: slot i holds seq next_ + i
  uint64_t held_ = 0;
  uint64_t peak_ = 0;
  uint64_t ok_ = 0;
  uint64_t skipped_ = 0;
  uint64_t failed_ = 0;
  uint64_t parked_ = 0;
  uint64_t retries_ = 0;
  std::vector<event_base*> ready_;
};

} // namespace keylane::detail
