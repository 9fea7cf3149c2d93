#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/messages.hpp"
#include "keylane/handler_registry.hpp"
#include "keylane/key.hpp"

namespace keylane::detail {

class engine;

/// Routes events from ingress to lanes. Owns the key -> lane map, the cap
/// on live lanes and the FIFO of keys waiting for a slot. A key is in one
/// of three states: running (a lane is alive and takes its events),
/// retiring (its lane runs `on_retire`; new events wait here) or waiting
/// (no slot yet; its events wait here in order). Single-threaded, as every
/// actor.
class supervisor : public caf::event_based_actor {
public:
  supervisor(caf::actor_config& cfg, engine* eng, caf::actor sink,
             handler_factory make, handler_params params);

  caf::behavior make_behavior() override;
  void on_exit() override;

  const char* name() const override { return "keylane.supervisor"; }

private:
  enum class state : uint8_t { running, retiring, waiting };

  struct entry {
    caf::actor lane;
    uint64_t forwarded = 0; // events sent to the current lane
    state st = state::waiting;
    bool touched = false;   // pending must go out at the end of this drain
    batch_ptr pending;      // events not yet sent to a lane
  };

  void drain();
  void route(event_ptr ev);
  void flush_touched();
  void start_lane(const key& k, entry& e);
  void on_idle(const key& k, uint64_t finished);
  void on_retired(const key& k);
  void admit();
  void publish();

  engine* eng_;
  caf::actor sink_;
  handler_factory make_;
  handler_params params_;
  size_t cap_;
  size_t ingress_batch_;

  std::unordered_map<key, entry, key_hasher> keys_;
  std::deque<key> waiting_;
  std::vector<std::pair<const key*, entry*>> touched_;
  std::vector<event_base*> buf_;
  size_t active_ = 0;
  uint64_t peak_ = 0;
  uint64_t spawned_ = 0;
  uint64_t retired_ = 0;
};

} // namespace keylane::detail
