// SPDX-License-Identifier: Apache-2.0
#include "database.hpp"

#include <chrono>
#include <unordered_map>

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

namespace ledger {

namespace {

// The database to itself: the round trip of request `id` is over.
using reply_atom = caf::atom_constant<caf::atom("db_reply")>;

// A class-based actor: CAF 0.17's function-based spawn without arguments
// dereferences an empty argument tuple (UBSan reports it inside CAF).
class database : public caf::event_based_actor {
public:
  explicit database(caf::actor_config& cfg) : caf::event_based_actor(cfg) {}

  const char* name() const override { return "ledger_database"; }

  caf::behavior make_behavior() override {
    return {
      [this](apply_atom, int64_t latency_us) {
        auto id = next_id_++;
        auto rp = make_response_promise();
        pending_.emplace(id, rp);
        delayed_send(this, std::chrono::microseconds{latency_us},
                     reply_atom::value, id, latency_us);
        return rp;
      },
      [this](reply_atom, uint64_t id, int64_t latency_us) {
        auto i = pending_.find(id);
        if (i == pending_.end())
          return;
        i->second.deliver(latency_us);
        pending_.erase(i);
      },
    };
  }

private:
  uint64_t next_id_ = 0;
  // Requests whose timer is running, by id.
  std::unordered_map<uint64_t, caf::response_promise> pending_;
};

} // namespace

caf::actor spawn_database(caf::actor_system& sys) {
  return sys.spawn<database>();
}

} // namespace ledger
