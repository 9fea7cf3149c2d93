// SPDX-License-Identifier: Apache-2.0
// Baseline 5: naive CAF. A dispatcher actor looks up (or spawns) one
// long-lived actor per key and forwards; each key actor runs the work and
// sends the result to a sink actor, which delivers. Own actor system,
// CAF's default config (default scheduler) but for its worker threads,
// which --threads sets (CAF's default is one per core).

#include <unordered_map>

#include <caf/all.hpp>

#include "../way.hpp"

namespace keylane::bench {

namespace {

using stop_atom = caf::atom_constant<caf::atom("stop")>;

caf::behavior key_actor(caf::event_based_actor* self, caf::actor sink,
                        uint64_t iters) {
  return {
    [=](uint64_t k, uint32_t i, int64_t t) {
      auto r = do_work(item{k, i, t}, iters);
      self->send(sink, k, i, t, r);
    },
  };
}

struct dispatcher_state {
  std::unordered_map<uint64_t, caf::actor> keys;
};

caf::behavior dispatcher(caf::stateful_actor<dispatcher_state>* self,
                         caf::actor sink, uint64_t iters) {
  return {
    [=](uint64_t k, uint32_t i, int64_t t) {
      auto& a = self->state.keys[k];
      if (!a)
        a = self->spawn(key_actor, sink, iters);
      self->send(a, k, i, t);
    },
    [=](stop_atom) {
      for (auto& kv : self->state.keys)
        self->send_exit(kv.second, caf::exit_reason::user_shutdown);
      self->state.keys.clear();
      self->quit();
    },
  };
}

caf::behavior sink_actor(caf::event_based_actor*, output* out) {
  return {
    [=](uint64_t k, uint32_t i, int64_t t, uint64_t r) {
      out->deliver(item{k, i, t}, r);
    },
  };
}

class caf_naive final : public way {
public:
  explicit caf_naive(int threads) {
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    cfg_.set("scheduler.max-threads", static_cast<size_t>(threads));
  }

  std::string start(output& out, uint64_t work_iters) override {
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sink_ = sys_->spawn(sink_actor, &out);
    dispatcher_ = sys_->spawn(dispatcher, sink_, work_iters);
    return {};
  }

  bool submit(const item& it) override {
    caf::anon_send(dispatcher_, it.key, it.index, it.scheduled_ns);
    return true;
  }

  std::string stop() override {
    caf::anon_send(dispatcher_, stop_atom::value);
    caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
    dispatcher_ = nullptr;
    sink_ = nullptr;
    sys_.reset(); // waits for every actor to finish
    return {};
  }

private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor sink_;
  caf::actor dispatcher_;
};

} // namespace

std::string caf_default_description() {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  return "CAF " + std::to_string(CAF_MAJOR_VERSION) + "."
         + std::to_string(CAF_MINOR_VERSION) + "."
         + std::to_string(CAF_PATCH_VERSION) + " default config: scheduler '"
         + caf::to_string(caf::defaults::scheduler::policy)
         + "', but with --threads workers (its default here: "
         + std::to_string(sys.scheduler().num_workers()) + ")";
}

std::unique_ptr<way> make_caf_naive(int threads) {
  return std::make_unique<caf_naive>(threads);
}

} // namespace keylane::bench
