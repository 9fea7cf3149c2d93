// SPDX-License-Identifier: Apache-2.0
#include "live_lanes.hpp"

#include <utility>

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "database.hpp"

namespace ledger {

live_lanes::~live_lanes() {
  stop();
}

caf::expected<ledger_runtime*>
live_lanes::start(keylane::settings cfg, const keylane::handler_registry& reg,
                  ledger_runtime::callback on_output,
                  std::shared_ptr<lane_context> ctx) {
  stop();
  auto rt = ledger_runtime::start(std::move(cfg), reg, std::move(on_output));
  if (!rt)
    return std::move(rt.error());
  ctx->db = spawn_database((*rt)->system());
  std::lock_guard<std::mutex> guard{mtx_};
  rt_ = std::move(*rt);
  ctx_ = std::move(ctx);
  return rt_.get();
}

bool live_lanes::visit(const std::function<void(ledger_runtime&)>& f) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!rt_)
    return false;
  f(*rt_);
  return true;
}

keylane::stop_report live_lanes::stop() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!rt_)
    return {};
  // The database first: the runtime wants the actors its handlers talk to
  // ended before it stops (runtime::system()).
  caf::anon_send_exit(ctx_->db, caf::exit_reason::user_shutdown);
  auto report = rt_->stop();
  rt_.reset();
  ctx_.reset();
  return report;
}

} // namespace ledger
