// SPDX-License-Identifier: Apache-2.0
// The keylane way: one lane per active account (at most max_active_keys),
// each sending its account's events one at a time to a database actor.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <utility>

#include <keylane/errc.hpp>
#include <keylane/handler_registry.hpp>

#include "lane_settings.hpp"
#include "ledger_handler.hpp"
#include "live_lanes.hpp"
#include "ways.hpp"

namespace ledger {

namespace {

// Far beyond any plausible run (the hot account alone takes ~0.5 s).
constexpr auto drain_timeout = std::chrono::seconds(60);

// Outcomes other than ok, seen on the consumer thread.
struct failures {
  std::mutex mtx;
  uint64_t count = 0;
  std::string first;
};

} // namespace

caf::expected<way_result> run_key_lanes(const workload& w,
                                        keylane::settings cfg,
                                        live_lanes& live,
                                        keylane::cli::progress* shown) {
  auto ctx = std::make_shared<lane_context>(w, shown);
  auto failed = std::make_shared<failures>();

  keylane::handler_registry registry;
  registry.add(handler_name, typeid(ledger_event), typeid(ledger_result),
               [ctx](const keylane::handler_params& params) {
                 return std::make_unique<ledger_handler>(params, ctx);
               });

  auto on_output = [ctx, failed](ledger_runtime::event_type& e) {
    ctx->measured.finished(e.payload.account);
    if (e.status != keylane::outcome::ok) {
      std::lock_guard<std::mutex> guard{failed->mtx};
      if (failed->count++ == 0)
        failed->first = e.key().to_string() + " #"
                        + std::to_string(e.payload.index) + ": "
                        + keylane::to_string(e.status) + " " + e.error;
    }
  };

  auto rt = live.start(std::move(cfg), registry, on_output, ctx);
  if (!rt)
    return std::move(rt.error());
  auto& runtime = **rt;
  auto shutdown = [&] { return live.stop(); };

  ctx->measured.start();
  for (const auto& ev : w.events) {
    auto res = runtime.submit(w.names[ev.account], ev);
    if (!res) {
      shutdown();
      return keylane::make_error(
        res.code(), "key_lanes: submit of " + w.names[ev.account] + " #"
                      + std::to_string(ev.index) + " rejected: "
                      + keylane::to_string(res.code()));
    }
  }
  if (!runtime.drain(drain_timeout)) {
    auto report = shutdown();
    return keylane::make_error(
      keylane::errc::timeout,
      "key_lanes: drain timed out after "
        + std::to_string(drain_timeout.count()) + " s; "
        + std::to_string(report.delivered) + " of "
        + std::to_string(report.accepted) + " events delivered, "
        + std::to_string(report.unfinished.size()) + " unfinished");
  }
  // drain() returns after the consumer thread's last callback, so `failed`
  // is complete; the runtime stays in `live` for the caller to stop or
  // serve.
  uint64_t failed_count = 0;
  std::string first_failure;
  {
    std::lock_guard<std::mutex> guard{failed->mtx};
    failed_count = failed->count;
    first_failure = failed->first;
  }
  if (failed_count > 0) {
    shutdown();
    return keylane::make_error(
      keylane::errc::handler_failed,
      "key_lanes: " + std::to_string(failed_count)
        + " events did not end ok; first: " + first_failure);
  }
  return ctx->measured.result("key_lanes");
}

} // namespace ledger
