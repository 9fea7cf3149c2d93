// SPDX-License-Identifier: Apache-2.0
#include "retry_scenario.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <typeinfo>
#include <utility>

#include <keylane/errc.hpp>
#include <keylane/handler_registry.hpp>

#include "fault_plan.hpp"
#include "faulty_handler.hpp"
#include "lane_settings.hpp"

namespace ledger {

namespace {

static_assert(keylane::codec<ledger_event>::available,
              "ledger events must be parkable in SQLite (inspect in "
              "workload.hpp)");

// Far beyond any plausible run (each account takes ~15 ms plus backoffs).
constexpr auto drain_timeout = std::chrono::seconds(60);

// The outputs, filed by pass and account. Written on the consumer thread,
// read by the scenario after a drain; the mutex orders the two.
class recorder {
public:
  explicit recorder(uint32_t accounts) : passes_{pass_outputs(accounts),
                                                 pass_outputs(accounts)} {}

  void record(const ledger_runtime::event_type& e) {
    output_record r;
    r.index = e.payload.index;
    r.status = e.status;
    r.attempts = e.attempts;
    if (e.result) {
      r.accepted = e.result->accepted;
      r.balance = e.result->balance;
    }
    r.error = e.error;
    std::lock_guard<std::mutex> guard{mtx_};
    passes_[pass_].at(e.payload.account).push_back(std::move(r));
  }

  // Files later outputs under the replay (only between drains).
  void start_replay() {
    std::lock_guard<std::mutex> guard{mtx_};
    pass_ = 1;
  }

  pass_outputs take(size_t pass) {
    std::lock_guard<std::mutex> guard{mtx_};
    return std::move(passes_[pass]);
  }

private:
  std::mutex mtx_;
  size_t pass_ = 0;
  pass_outputs passes_[2];
};

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

caf::error drain_failed(ledger_runtime& rt, const char* what) {
  auto s = rt.stats();
  return keylane::make_error(
    keylane::errc::timeout,
    std::string{"retry: "} + what + " did not drain in "
      + std::to_string(drain_timeout.count()) + " s; "
      + std::to_string(s.delivered) + " of " + std::to_string(s.accepted)
      + " events delivered");
}

// Keeps the runtime's error code and says which call failed.
caf::error operator_failed(const char* call, const caf::error& err) {
  auto code = err.category() == caf::atom("keylane")
                ? static_cast<keylane::errc>(err.code())
                : keylane::errc::handler_failed;
  return keylane::make_error(code, std::string{"retry: "} + call
                                     + " failed: " + keylane::render(err));
}

} // namespace

workload make_retry_workload(const retry_spec& spec) {
  workload_spec ws;
  ws.seed = spec.seed;
  ws.accounts = spec.accounts;
  // Account 0 is not hot here: every account gets the same share.
  ws.hot_events = spec.events_per_account;
  ws.cold_events = spec.events_per_account * (spec.accounts - 1);
  return make_workload(ws);
}

uint64_t expected_outputs(const retry_spec& spec) {
  uint64_t all = uint64_t{spec.accounts} * spec.events_per_account;
  return all + (spec.events_per_account - spec.permanent_index);
}

caf::expected<retry_observed>
run_retry_scenario(const retry_spec& spec, keylane::settings cfg,
                   live_lanes& live, keylane::cli::progress* shown) {
  retry_observed obs;
  obs.w = make_retry_workload(spec);
  obs.cfg = cfg;
  auto ctx = std::make_shared<lane_context>(obs.w, shown);
  auto faults = std::make_shared<fault_plan>();
  faults->fail_transiently(spec.transient_account, spec.transient_index,
                           spec.transient_failures);
  faults->fail_permanently(spec.permanent_account, spec.permanent_index);
  auto rec = std::make_shared<recorder>(spec.accounts);

  keylane::handler_registry registry;
  registry.add(handler_name, typeid(ledger_event), typeid(ledger_result),
               [ctx, faults](const keylane::handler_params& params) {
                 return std::make_unique<faulty_handler>(params, ctx, faults);
               });
  auto on_output = [ctx, rec](ledger_runtime::event_type& e) {
    ctx->measured.finished(e.payload.account);
    rec->record(e);
  };

  auto started = live.start(std::move(cfg), registry, on_output, ctx);
  if (!started)
    return std::move(started.error());
  auto& rt = **started;
  auto shutdown = [&] { live.stop(); };
  // Every way out below shuts down first; `fail` keeps that in one place.
  auto fail = [&](caf::error err) {
    shutdown();
    return err;
  };

  // First pass: the whole workload, faults armed.
  ctx->measured.start();
  auto t0 = clock::now();
  for (const auto& ev : obs.w.events) {
    auto res = rt.submit(obs.w.names[ev.account], ev);
    if (!res)
      return fail(keylane::make_error(
        res.code(), "retry: submit of " + obs.w.names[ev.account] + " #"
                      + std::to_string(ev.index) + " rejected: "
                      + keylane::to_string(res.code())));
  }
  if (!rt.drain(drain_timeout))
    return fail(drain_failed(rt, "the first pass"));
  obs.first_pass_s = seconds_since(t0);

  // The operator looks at what was parked.
  const auto& broken = obs.w.names[spec.permanent_account];
  auto keys = rt.parked_keys();
  if (!keys)
    return fail(operator_failed("parked_keys()", keys.error()));
  obs.parked_before = std::move(*keys);
  auto parked = rt.parked_events(broken);
  if (!parked)
    return fail(operator_failed("parked_events()", parked.error()));
  for (auto& p : *parked)
    obs.parked_list.push_back(p.payload);

  // ... fixes the account and replays it.
  faults->clear(spec.permanent_account);
  rec->start_replay();
  auto t1 = clock::now();
  auto replayed = rt.replay(broken);
  if (!replayed)
    return fail(operator_failed("replay()", replayed.error()));
  obs.replayed = *replayed;
  if (!rt.drain(drain_timeout))
    return fail(drain_failed(rt, "the replay"));
  obs.replay_s = seconds_since(t1);
  keys = rt.parked_keys();
  if (!keys)
    return fail(operator_failed("parked_keys()", keys.error()));
  obs.parked_after = std::move(*keys);
  obs.stats = rt.stats();

  // Drained: every output is recorded. The runtime stays in `live`.
  obs.first_pass = rec->take(0);
  obs.replay_pass = rec->take(1);
  obs.measured = ctx->measured.result("retry");
  return obs;
}

} // namespace ledger
