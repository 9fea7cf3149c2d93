// The keylane way: one lane per active account (at most max_active_keys),
// each sending its account's events one at a time to a database actor.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <utility>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <keylane/errc.hpp>
#include <keylane/handler_registry.hpp>
#include <keylane/runtime.hpp>

#include "database.hpp"
#include "lane_settings.hpp"
#include "ledger_handler.hpp"
#include "ways.hpp"

namespace ledger {

namespace {

using ledger_runtime = keylane::runtime<ledger_event, ledger_result>;

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
                                        keylane::settings cfg) {
  auto ctx = std::make_shared<lane_context>(w);
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

  auto rt = ledger_runtime::start(std::move(cfg), registry, on_output);
  if (!rt)
    return std::move(rt.error());
  auto& runtime = **rt;
  ctx->db = spawn_database(runtime.system());

  auto shutdown = [&] {
    caf::anon_send_exit(ctx->db, caf::exit_reason::user_shutdown);
    return runtime.stop();
  };

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
  bool drained = runtime.drain(drain_timeout);
  auto report = shutdown();
  if (!drained)
    return keylane::make_error(
      keylane::errc::timeout,
      "key_lanes: drain timed out after "
        + std::to_string(drain_timeout.count()) + " s; "
        + std::to_string(report.delivered) + " of "
        + std::to_string(report.accepted) + " events delivered, "
        + std::to_string(report.unfinished.size()) + " unfinished");
  std::lock_guard<std::mutex> guard{failed->mtx};
  if (failed->count > 0)
    return keylane::make_error(
      keylane::errc::handler_failed,
      "key_lanes: " + std::to_string(failed->count)
        + " events did not end ok; first: " + failed->first);
  return ctx->measured.result("key_lanes");
}

} // namespace ledger
