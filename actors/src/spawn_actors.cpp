#include "keylane/detail/runtime_parts.hpp"

#include "keylane/detail/sink.hpp"
#include "keylane/detail/supervisor.hpp"

namespace keylane::detail {

runtime_actors spawn_actors(caf::actor_system& sys, const runtime_parts& p,
                            handler_factory make, handler_params params,
                            std::vector<key> parked) {
  runtime_actors a;
  a.sink = sys.spawn<sink>(p);
  a.supervisor = sys.spawn<supervisor>(p, a.sink, std::move(make),
                                       std::move(params), std::move(parked));
  return a;
}

} // namespace keylane::detail
