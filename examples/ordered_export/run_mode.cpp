// SPDX-License-Identifier: Apache-2.0
#include "run_mode.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <typeinfo>
#include <utility>

#include <keylane/errc.hpp>
#include <keylane/handler_registry.hpp>

#include "export_handler.hpp"
#include "model.hpp"
#include "output_check.hpp"

namespace ordered_export {

namespace {

// Far beyond any plausible run (the slowest mode takes about 6 s).
constexpr auto drain_timeout = std::chrono::seconds(120);

keylane::key key_of(const export_item& x, keying k) {
  if (k == keying::per_customer)
    return "customer-" + std::to_string(x.customer);
  return "row-" + std::to_string(x.index);
}

std::string unfinished(const keylane::stop_report& r) {
  return std::to_string(r.delivered) + " of " + std::to_string(r.accepted)
         + " rows delivered, " + std::to_string(r.unfinished.size())
         + " unfinished";
}

} // namespace

caf::expected<mode_result> run_mode(const mode& m, const keylane::settings& cfg,
                                    const std::vector<export_item>& items,
                                    keylane::cli::progress* shown,
                                    kept_runtime& kept) {
  // The previous mode's runtime goes first, so its threads are not around
  // while this one is measured.
  kept.stop();
  auto busy = std::make_shared<busy_meter>(
    std::chrono::milliseconds(cfg.attempt_timeout_ms));
  auto check = std::make_shared<output_check>(items.size(), cfg.order,
                                              m.keys_by);
  keylane::handler_registry registry;
  registry.add(handler_name, typeid(export_item), typeid(export_row),
               [busy](const keylane::handler_params&) {
                 return std::make_unique<export_handler>(busy);
               });
  auto on_output = [check, shown](export_runtime::event_type& e) {
    check->seen(e.seq, e.payload, e.status);
    if (shown)
      shown->add();
  };
  auto started = export_runtime::start(cfg, registry, on_output);
  if (!started)
    return std::move(started.error());
  auto rt = std::move(*started);

  check->start();
  for (const auto& x : items) {
    auto copy = x;
    auto res = rt->submit(key_of(x, m.keys_by), std::move(copy));
    if (!res) {
      auto report = rt->stop();
      return keylane::make_error(
        res.code(), m.name + ": submit of row " + std::to_string(x.index)
                      + " rejected: " + keylane::to_string(res.code()) + "; "
                      + unfinished(report));
    }
  }
  if (!rt->drain(drain_timeout)) {
    auto report = rt->stop();
    return keylane::make_error(keylane::errc::timeout,
                               m.name + ": drain timed out after "
                                 + std::to_string(drain_timeout.count())
                                 + " s; " + unfinished(report));
  }
  // drain() returns after the consumer thread's last callback, so `check`
  // is complete. A call that timed out ends for the meter at its timeout,
  // on its lane, about when its tombstone is delivered: wait for that.
  (void) busy->settle(std::chrono::seconds(1));
  auto st = rt->stats();
  mode_result r;
  r.name = m.name;
  r.title = m.title;
  if (m.model)
    r.ref = model(items, cfg.max_active_keys, *m.model);
  r.total_s = check->last_s();
  r.first_result_s = check->first_s();
  r.peak_buffered = st.peak_sink_buffered;
  r.spilled = st.spilled;
  r.slots = cfg.max_active_keys;
  r.window = cfg.window;
  r.window_max = cfg.window_max;
  auto capacity = static_cast<double>(cfg.max_active_keys) * r.total_s;
  auto busy_s = std::chrono::duration<double>(busy->busy()).count();
  r.idle_share = capacity > 0 ? std::clamp(1.0 - busy_s / capacity, 0.0, 1.0)
                              : 0.0;
  r.tombstones = check->tombstones();
  r.violations = check->violations();
  r.duplicates = check->duplicates();
  r.missing = check->missing();
  kept.keep(std::move(rt), m);
  return r;
}

} // namespace ordered_export
