#include "database.hpp"

#include <chrono>
#include <unordered_map>

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

namespace ledger {

namespace {

// The database to itself: the round trip of request `id` is over.
using reply_atom = caf::atom_constant<caf::atom("db_reply")>;

struct database_state {
  uint64_t next_id = 0;
  // Requests whose timer is running, by id.
  std::unordered_map<uint64_t, caf::response_promise> pending;
  static inline const char* name = "ledger_database";
};

caf::behavior database(caf::stateful_actor<database_state>* self) {
  return {
    [=](apply_atom, int64_t latency_us) {
      auto id = self->state.next_id++;
      auto rp = self->make_response_promise();
      self->state.pending.emplace(id, rp);
      self->delayed_send(self, std::chrono::microseconds{latency_us},
                         reply_atom::value, id, latency_us);
      return rp;
    },
    [=](reply_atom, uint64_t id, int64_t latency_us) {
      auto i = self->state.pending.find(id);
      if (i == self->state.pending.end())
        return;
      i->second.deliver(latency_us);
      self->state.pending.erase(i);
    },
  };
}

} // namespace

caf::actor spawn_database(caf::actor_system& sys) {
  return sys.spawn(database);
}

} // namespace ledger
