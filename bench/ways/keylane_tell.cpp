// SPDX-License-Identifier: Apache-2.0
// Keys that message keys (keylane_tell): each event goes first to a front
// key, whose handler passes it on to the event's own key with `tell`, and
// the work is done there. Per-key order holds: one front key feeds one
// key. Against keylane_per_key (the event submitted to its key from
// outside), the difference is the cost of a message between keys and of
// the front event.
//
// Not measured: the same with `submit` on the runtime from inside the
// handler, the way before `tell`. On hot_key it never finished: the
// producer, blocked on the window, took each credit that came back, the
// window filled with front events, and each of those waited for a credit
// to pass its event on (docs/messaging.md).

#include <keylane/config_loader.hpp>
#include <keylane/runtime.hpp>

#include "../way.hpp"
#include "lanes_retired.hpp"

namespace keylane::bench {

namespace {

using rt_type = keylane::runtime<item, uint64_t>;

// Keys with this bit are front keys; the workloads' keys are far below it.
constexpr uint64_t front_bit = uint64_t{1} << 62;

struct relay_handler final : keylane::handler<item, uint64_t> {
  explicit relay_handler(uint64_t iters) : iters_(iters) {}

  void on_event(item& it, keylane::completion<uint64_t> done) override {
    if ((it.key & front_bit) == 0)
      return done.ok(do_work(it, iters_));
    item next = it;
    next.key &= ~front_bit;
    auto code = tell(keylane::key{next.key}, next);
    if (code == errc::none)
      return done.ok(0);
    done.fail(to_string(code)); // retried after a backoff (max_attempts)
  }

  uint64_t iters_;
};

class relay_way final : public way {
public:
  relay_way(scheduler_policy sched, int threads, std::vector<std::string> sets)
    : sched_(sched), threads_(threads), sets_(std::move(sets)) {}

  std::string start(output& out, uint64_t work_iters) override {
    settings s;
    s.threads = static_cast<size_t>(threads_); // CAF workers and shards
    s.max_active_keys = 4096;
    s.window = 65536;
    s.key_backlog = 65536; // as keylane_way's (the default before 0.2.0)
    s.overflow = overflow_policy::block;
    s.order = order_mode::per_key;
    s.scheduler = sched_;
    // A full message budget fails the front event's attempt: it is tried
    // again shortly, never dropped.
    s.max_attempts = 1000000;
    s.initial_backoff_ms = 1;
    s.max_backoff_ms = 1;
    if (auto err = apply_overrides(s, sets_))
      return "keylane settings: " + render(err);
    auto made = rt_type::start(
      std::move(s),
      [work_iters](const handler_params&) {
        return std::make_unique<relay_handler>(work_iters);
      },
      [&out](rt_type::event_type& e) {
        if ((e.payload.key & front_bit) != 0 && e.status == outcome::ok)
          return; // the front event passed it on
        if (e.status == outcome::ok && e.result)
          out.deliver(e.payload, *e.result);
        else
          out.note_failure();
      });
    if (!made)
      return "keylane start failed: " + render(made.error());
    rt_ = std::move(*made);
    return {};
  }

  bool submit(const item& it) override {
    item front = it;
    front.key |= front_bit;
    return rt_->submit(keylane::key{front.key}, front).ok();
  }

  bool settle(std::chrono::milliseconds timeout) override {
    return wait_lanes_retired(*rt_, timeout);
  }

  uint64_t lanes_spawned() const override {
    return rt_ ? rt_->stats().lanes_spawned : 0;
  }

  std::string stop() override {
    auto [st, note] = stop_runtime(rt_);
    if (st.retries != 0)
      note += (note.empty() ? "" : "; ") + std::to_string(st.retries)
              + " front attempts retried (message budget full)";
    return note;
  }

private:
  scheduler_policy sched_;
  int threads_;
  std::vector<std::string> sets_;
  std::unique_ptr<rt_type> rt_;
};

} // namespace

std::unique_ptr<way> make_keylane_tell(const std::string& scheduler,
                                       int threads,
                                       const std::vector<std::string>& sets) {
  return std::make_unique<relay_way>(scheduler == "stealing"
                                       ? scheduler_policy::stealing
                                       : scheduler_policy::sharing,
                                     threads, sets);
}

} // namespace keylane::bench
