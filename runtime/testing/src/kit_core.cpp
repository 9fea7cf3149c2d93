// SPDX-License-Identifier: Apache-2.0
#include "keylane/testing/detail/kit_core.hpp"

#include <stdexcept>
#include <utility>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "keylane/detail/messages.hpp"

namespace keylane::testing::detail {

namespace kd = keylane::detail;

namespace {

// Runs the kit's next call inside its actor (`kit_core::within`).
using kit_run_atom = caf::atom_constant<caf::atom("kl_kitrun")>;

} // namespace

kit_core::kit_core(complete_fn on_complete)
  : on_complete_(std::move(on_complete)) {
  cfg_ = std::make_unique<caf::actor_system_config>();
  // CAF's deterministic scheduler: no worker threads, and a clock that
  // moves only when told to.
  cfg_->set("scheduler.policy", caf::atom("testing"));
  cfg_->set("logger.verbosity", caf::atom("quiet"));
  system_ = std::make_unique<caf::actor_system>(*cfg_);
  sched_ = dynamic_cast<caf::scheduler::test_coordinator*>(
    &system_->scheduler());
  if (sched_ == nullptr)
    throw std::logic_error("keylane::testing: CAF did not start its "
                           "\"testing\" scheduler");
  // The shard's part: completions finished outside the handler's call
  // come here as messages, as they come to a shard.
  // `this` travels as the spawn's argument, not in a capture: CAF 0.17
  // binds a function actor's empty argument tuple through a null pointer
  // (UBSan: "reference binding to null pointer").
  actor_ = system_->spawn(
    [](caf::event_based_actor* self, kit_core* core) {
      core->self_ = self;
      return caf::behavior{
        [core](kd::complete_atom, uint64_t lane, uint64_t token,
               uint8_t status, bool permanent, std::string& error,
               kd::result_box_ptr& box) {
          core->on_complete_(lane, token, static_cast<outcome>(status),
                             permanent, std::move(error), std::move(box));
        },
        [core](kit_run_atom) {
          auto fn = std::move(core->calls_.front());
          core->calls_.pop_front();
          fn();
        },
      };
    },
    this);
  run_actors();
  if (self_ == nullptr)
    throw std::logic_error("keylane::testing: the kit's actor did not start");
}

kit_core::~kit_core() {
  timers_.clear();
  if (actor_) {
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    actor_ = nullptr;
  }
  // Lets every actor see its exit in this thread before the system goes.
  run_actors();
  self_ = nullptr;
}

caf::abstract_actor* kit_core::host() const noexcept {
  return caf::actor_cast<caf::abstract_actor*>(actor_);
}

uint64_t kit_core::set_timer(duration delay,
                             keylane::detail::unique_function fn) {
  if (delay < duration::zero())
    delay = duration::zero();
  auto id = ++next_id_;
  auto due = now_ + delay;
  timers_.emplace(std::make_pair(due, id), std::move(fn));
  due_of_.emplace(id, due);
  return id;
}

bool kit_core::cancel_timer(uint64_t id) {
  auto i = due_of_.find(id);
  if (i == due_of_.end())
    return false;
  timers_.erase(std::make_pair(i->second, id));
  due_of_.erase(i);
  return true;
}

bool kit_core::timer_pending(uint64_t id) const {
  return due_of_.count(id) != 0;
}

std::optional<kit_core::duration> kit_core::next_timer() const {
  if (timers_.empty())
    return std::nullopt;
  return timers_.begin()->first.first;
}

size_t kit_core::run_actors() {
  size_t n = 0;
  while (sched_->has_job())
    n += sched_->run();
  return n;
}

void kit_core::within(keylane::detail::unique_function fn) {
  calls_.push_back(std::move(fn));
  caf::anon_send(actor_, kit_run_atom::value);
  run_actors();
}

void kit_core::advance(duration d, const std::function<void()>& settle) {
  auto target = now_ + std::max(d, duration::zero());
  while (!timers_.empty() && timers_.begin()->first.first <= target) {
    auto first = timers_.begin();
    auto [due, id] = first->first;
    auto fn = std::move(first->second);
    timers_.erase(first);
    due_of_.erase(id);
    now_ = due;
    sync_caf_clock();
    within(std::move(fn));
    settle();
  }
  now_ = target;
  sync_caf_clock();
  settle();
}

void kit_core::sync_caf_clock() {
  if (now_ > caf_now_) {
    sched_->advance_time(now_ - caf_now_);
    caf_now_ = now_;
  }
  run_actors();
}

} // namespace keylane::testing::detail

// The symbol keylane-testing.pc names, as every component's does (the
// kit needs no anchor of its own: a test that includes it calls into it).
extern "C" void keylane_component_testing() {}
