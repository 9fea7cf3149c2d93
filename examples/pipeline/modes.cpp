// SPDX-License-Identifier: Apache-2.0
#include "modes.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <keylane/pipeline.hpp>

#include "handlers.hpp"
#include "model.hpp"

namespace pipeline_example {

const std::vector<mode>& all_modes() {
  static const std::vector<mode> modes{
    {"sink_only", false, false, false, ""},
    {"each_stage", false, true, false, ""},
    {"stateful", true, false, true, "0 mismatches"},
    {"stateful_unsequenced", true, false, false, ""},
  };
  return modes;
}

namespace {

using clock_type = std::chrono::steady_clock;
using result_type = keylane::pipeline_result<priced>;

double seconds(clock_type::duration d) {
  return std::chrono::duration<double>(d).count();
}

keylane::stage_spec second_stage(const mode& m) {
  keylane::stage_spec s;
  s.name = m.stateful ? "total" : "convert";
  if (m.stateful)
    s.kind = m.resequenced ? keylane::stage_kind::ordered
                           : keylane::stage_kind::keyed;
  if (m.each_stage)
    s.resequence = keylane::order_mode::global;
  return s;
}

// Checks each output as it comes (the callback runs on one thread at a
// time) against the item it belongs to.
struct checker {
  const std::vector<item>* items;
  const std::vector<int64_t>* totals; // null: not stateful
  clock_type::time_point start;
  std::optional<clock_type::time_point> first;
  std::vector<uint8_t> seen;
  uint64_t next = 0;
  mode_result* out;

  void operator()(result_type& r) {
    if (!first)
      first = clock_type::now();
    ++out->delivered;
    if (r.seq != next++ || r.seq >= seen.size() || seen[r.seq]++ != 0) {
      ++out->violations;
      return;
    }
    if (r.status != keylane::outcome::ok) {
      ++out->tombstones;
      return;
    }
    auto& x = (*items)[r.seq];
    auto want = totals ? (*totals)[r.seq]
                       : converted(fetched{x, cents_of(x)});
    if (r.result->index != x.index || r.result->value != want)
      ++out->mismatches;
  }
};

} // namespace

mode_result run_mode(const mode& m, const keylane::settings& base,
                     const std::vector<item>& items) {
  mode_result res;
  res.mode = m.name;
  res.reference = m.reference;
  if (!m.stateful) {
    // Stage 2 is stateless: its figures are the model's (model.hpp).
    res.model = model(items, base.max_active_keys, m.each_stage);
    char buf[96];
    if (m.each_stage)
      std::snprintf(buf, sizeof(buf),
                    "model: %.2f s, peaks %zu (after stage 1) and %zu (sink)",
                    res.model->total_s, res.model->held_after_1,
                    res.model->held_at_sink);
    else
      std::snprintf(buf, sizeof(buf), "model: %.2f s, peak %zu held",
                    res.model->total_s, res.model->held_at_sink);
    res.reference = buf;
  }
  auto totals = sequential_totals(items);
  auto store = std::make_shared<total_store>();
  auto cfg = base;
  cfg.order = keylane::order_mode::global;
  checker check{&items, m.stateful ? &totals : nullptr, {}, {},
                std::vector<uint8_t>(items.size(), 0), 0, &res};
  auto builder = keylane::pipeline_builder<item>{}.stage<fetched>(
    {"fetch", keylane::stage_kind::unordered},
    [] { return std::make_unique<fetch_handler>(); });
  using second_factory = keylane::pipeline_builder<item, fetched>::factory<priced>;
  second_factory make_second = [store, stateful = m.stateful]()
    -> std::unique_ptr<keylane::handler<fetched, priced>> {
    if (stateful)
      return std::make_unique<total_handler>(store);
    return std::make_unique<convert_handler>();
  };
  auto started = std::move(builder)
                   .stage<priced>(second_stage(m), make_second)
                   .start(cfg, [&check](result_type& r) { check(r); });
  if (!started) {
    res.error = keylane::render(started.error());
    return res;
  }
  auto& p = **started;
  check.start = clock_type::now();
  for (auto x : items) {
    auto r = p.submit(keylane::key{uint64_t{x.account}}, std::move(x));
    if (!r) {
      res.error = std::string{"submit refused: "} + keylane::to_string(r.code());
      break;
    }
  }
  if (!p.drain(std::chrono::minutes(5)) && res.error.empty())
    res.error = "drain timed out";
  auto end = clock_type::now();
  auto st = p.stats();
  p.stop();
  res.total_s = seconds(end - check.start);
  res.first_result_s = check.first ? seconds(*check.first - check.start) : 0;
  res.peak_buffered = st.peak_held;
  for (auto& s : st.stages)
    res.stage_peaks.push_back(s.peak_held);
  res.violations += items.size() - std::min<uint64_t>(res.delivered,
                                                       items.size());
  return res;
}

} // namespace pipeline_example
