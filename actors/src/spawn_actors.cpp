// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/runtime_parts.hpp"

#include <caf/all.hpp>

#include "keylane/detail/inboxes.hpp"
#include "keylane/detail/output.hpp"

#include "keylane/detail/sink.hpp"
#include "keylane/detail/supervisor.hpp"

namespace keylane::detail {

runtime_actors spawn_actors(caf::actor_system& sys, const runtime_parts& p,
                            handler_factory make, handler_params params,
                            std::vector<key> parked) {
  runtime_actors a;
  // Global order with a callback and `output_thread = "consumer"`: the
  // sink is the consumer, on a thread of its own (the callback never takes
  // a worker's time), and emits with no hand-off after it.
  if (p.cfg.order == order_mode::global
      && p.cfg.output_thread == output_thread::consumer
      && p.out.has_callback())
    a.sink = sys.spawn<sink, caf::detached>(sink_parts(p));
  else
    a.sink = sys.spawn<sink>(sink_parts(p));
  auto maker = std::make_shared<handler_maker>(std::move(make),
                                               std::move(params));
  // The shards take events from the first submit on, so they exist (and
  // producers can wake them) before `start` returns.
  std::vector<caf::actor> shards;
  for (size_t i = 0; i < p.boxes.shard_count(); ++i) {
    shards.push_back(
      sys.spawn<shard>(shard_parts(p), a.sink, static_cast<uint32_t>(i),
                       maker));
    p.boxes.attach_shard(i, shards.back());
  }
  a.supervisor = sys.spawn<supervisor>(supervisor_parts(p), a.sink, shards,
                                       std::move(parked));
  // Ahead of anything a submit could make them send or receive.
  caf::anon_send(a.sink, supervisor_atom::value, a.supervisor);
  for (auto& s : shards)
    caf::anon_send(s, supervisor_atom::value, a.supervisor);
  return a;
}

} // namespace keylane::detail
