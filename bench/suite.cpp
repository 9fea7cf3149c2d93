// SPDX-License-Identifier: Apache-2.0
#include "suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "driver.hpp"
#include "workload.hpp"

namespace keylane::bench {

namespace {

struct cell_samples {
  std::vector<sample> tput, at_rate, at_half;
};

std::vector<double> collect(const std::vector<sample>& ss,
                            double (*f)(const sample&)) {
  std::vector<double> out;
  for (auto& s : ss)
    out.push_back(f(s));
  return out;
}

// The upper bound, in us, of the bucket of `h` that holds quantile `q`
// (keylane's histogram keeps counts per bucket only); +inf in the
// unbounded last bucket, 0 when `h` is empty.
double bucket_quantile_us(const latency_histogram& h, double q) {
  if (h.count == 0)
    return 0;
  auto n = static_cast<double>(h.count);
  auto rank = static_cast<uint64_t>(std::ceil(q * n));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    seen += h.counts[i];
    if (seen >= rank)
      return i < h.bounds_us.size() ? static_cast<double>(h.bounds_us[i])
                                    : HUGE_VAL;
  }
  return HUGE_VAL;
}

// The keyed-state figures of the throughput runs (stateful ways).
void add_state_figures(row& r, const std::vector<sample>& tput) {
  std::vector<double> loads, p50, p99, mean, writes, bytes, batches, per_s;
  for (auto& s : tput) {
    if (!s.state)
      continue;
    auto& st = *s.state;
    loads.push_back(static_cast<double>(st.loads));
    p50.push_back(bucket_quantile_us(st.load_latency, 0.5));
    p99.push_back(bucket_quantile_us(st.load_latency, 0.99));
    mean.push_back(st.load_latency.count
                     ? static_cast<double>(st.load_latency.sum.count()) / 1e3
                         / static_cast<double>(st.load_latency.count)
                     : 0.0);
    writes.push_back(static_cast<double>(st.writes));
    bytes.push_back(static_cast<double>(st.write_bytes));
    batches.push_back(static_cast<double>(st.checkpoints));
    per_s.push_back(s.seconds > 0 ? static_cast<double>(st.writes) / s.seconds
                                  : 0.0);
    r.state_failures += st.load_failures + st.write_failures;
  }
  r.state_loads = summarize(loads);
  r.state_load_p50_us = summarize(p50);
  r.state_load_p99_us = summarize(p99);
  r.state_load_mean_us = summarize(mean);
  r.state_writes = summarize(writes);
  r.state_write_bytes = summarize(bytes);
  r.state_checkpoints = summarize(batches);
  r.state_writes_per_s = summarize(per_s);
}

void add_note(std::string& notes, const std::string& n) {
  if (n.empty() || notes.find(n) != std::string::npos)
    return;
  notes += (notes.empty() ? "" : "; ") + n;
}

row make_row(const way_spec& spec, const std::string& wl, uint64_t work_ns,
             const suite_options& opt, const cell_samples& c, double rate,
             bool overloaded, double half_rate) {
  row r;
  r.way = spec.name;
  r.workload = wl;
  r.work_ns = work_ns;
  r.scheduler = spec.scheduler;
  r.allocator = opt.allocator;
  r.producers = opt.producers;
  r.threads = spec.threads;
  r.ordered = spec.ordered;
  r.runs = static_cast<int>(c.tput.size());
  r.events = c.tput.empty() ? 0 : c.tput.front().events;
  r.events_per_s = summarize(collect(c.tput, [](const sample& s) {
    return s.seconds > 0 ? static_cast<double>(s.events) / s.seconds : 0.0;
  }));
  r.cpu_ns_per_event = summarize(collect(c.tput, [](const sample& s) {
    return s.events ? s.cpu_s * 1e9 / static_cast<double>(s.events) : 0.0;
  }));
  r.cs_per_event = summarize(collect(c.tput, [](const sample& s) {
    return s.events ? static_cast<double>(s.context_switches)
                        / static_cast<double>(s.events)
                    : 0.0;
  }));
  r.cores_busy = summarize(collect(c.tput, [](const sample& s) {
    return s.seconds > 0 ? s.cpu_s / s.seconds : 0.0;
  }));
  r.rate = rate;
  r.overloaded = overloaded;
  r.half_rate = half_rate;
  auto q = [](double quant) {
    return [quant](const sample& s) { return s.latency.quantile(quant) / 1e3; };
  };
  auto lat = [&](const std::vector<sample>& ss, double quant) {
    std::vector<double> xs;
    for (auto& s : ss)
      xs.push_back(q(quant)(s));
    return summarize(xs);
  };
  r.p50_us = lat(c.at_rate, 0.5);
  r.p99_us = lat(c.at_rate, 0.99);
  r.p999_us = lat(c.at_rate, 0.999);
  r.p50_half_us = lat(c.at_half, 0.5);
  r.p99_half_us = lat(c.at_half, 0.99);
  r.p999_half_us = lat(c.at_half, 0.999);
  auto pacer_p99 = [](const sample& s) { return s.pacer_lag.quantile(0.99) / 1e3; };
  r.pacer_p99_us = summarize(collect(c.at_rate, pacer_p99));
  r.pacer_p99_half_us = summarize(collect(c.at_half, pacer_p99));
  r.peak_rss_mb = summarize(collect(c.tput, [](const sample& s) { return s.peak_rss_mb; }));
  r.base_rss_mb = summarize(collect(c.tput, [](const sample& s) { return s.base_rss_mb; }));
  r.idle_rss_mb = summarize(collect(c.tput, [](const sample& s) { return s.idle_rss_mb; }));
  r.lanes_per_event = summarize(collect(c.tput, [](const sample& s) {
    return s.events ? static_cast<double>(s.lanes_spawned) / static_cast<double>(s.events) : 0.0;
  }));
  std::vector<double> loads;
  for (auto* ss : {&c.tput, &c.at_rate, &c.at_half})
    for (auto& s : *ss) {
      r.violations += s.violations;
      r.rejected_submits += s.rejected_submits;
      r.completed = r.completed && s.completed;
      r.way_threads = std::max(r.way_threads, s.way_threads);
      loads.push_back(s.other_load * 100);
      add_note(r.notes, s.note);
    }
  r.other_load_pct = summarize(loads);
  r.state_store = spec.state_store;
  if (!r.state_store.empty())
    add_state_figures(r, c.tput);
  return r;
}

} // namespace

uint64_t work_iters_for(uint64_t ns) {
  static std::map<uint64_t, uint64_t> cache;
  auto it = cache.find(ns);
  if (it == cache.end())
    it = cache.emplace(ns, calibrate_work(ns)).first;
  return it->second;
}

uint64_t planned_runs(const suite_options& opt) {
  // Per way, workload and work: a warm-up, `runs` throughput runs and
  // `runs` pairs of open-loop runs.
  return uint64_t{opt.workloads.size()} * opt.work_ns.size() * opt.ways.size()
         * (1 + 3 * static_cast<uint64_t>(opt.runs));
}

std::vector<row> run_suite(const suite_options& opt,
                           const std::function<void(const row&)>& on_row) {
  // `run_once` returns after its measured span; counting here keeps the
  // progress line out of it.
  auto measured = [&](const way_spec& spec, const workload& wl,
                      const run_params& p) {
    auto s = run_once(spec, wl, p);
    if (opt.on_run)
      opt.on_run();
    return s;
  };
  std::vector<row> rows;
  size_t lat_events = static_cast<size_t>(std::ceil(opt.rate * opt.latency_seconds));
  size_t len = std::max(opt.events, lat_events);
  for (auto& wl_name : opt.workloads) {
    auto wl = make_workload(wl_name, len);
    for (auto work_ns : opt.work_ns) {
      run_params base;
      base.work_iters = work_iters_for(work_ns);
      std::vector<cell_samples> cells(opt.ways.size());
      // A warm-up run per way (not reported) sizes its throughput runs.
      std::vector<size_t> tput_events(opt.ways.size());
      for (size_t i = 0; i < opt.ways.size(); ++i) {
        auto p = base;
        p.events = std::max<size_t>(100, std::min<size_t>(opt.events / 10, 10000));
        auto s = measured(opt.ways[i], wl, p);
        double rate = s.seconds > 0 ? static_cast<double>(s.events) / s.seconds : 0;
        auto want = static_cast<size_t>(rate * opt.target_seconds);
        tput_events[i] = std::clamp(want, std::max<size_t>(1, opt.events / 10),
                                    opt.events);
      }
      // Runs alternate between ways, so drift in the machine's other load
      // hits every way alike.
      for (int r = 0; r < opt.runs; ++r)
        for (size_t i = 0; i < opt.ways.size(); ++i) {
          auto p = base;
          p.events = tput_events[i];
          p.producers = opt.producers;
          p.measure_idle = true;
          p.idle_pause_ms = opt.idle_pause_ms;
          cells[i].tput.push_back(measured(opt.ways[i], wl, p));
        }
      std::vector<double> max_rate(opt.ways.size());
      for (size_t i = 0; i < opt.ways.size(); ++i) {
        std::vector<double> xs;
        for (auto& s : cells[i].tput)
          xs.push_back(s.seconds > 0 ? static_cast<double>(s.events) / s.seconds : 0);
        max_rate[i] = summarize(xs).median;
      }
      // An overloaded open-loop run queues without bound: keep its length
      // (and so its drain time) to what the way can do in the run time.
      auto open_loop_events = [&](double rate, double max) {
        double n = std::min(rate, std::max(max, 1.0)) * opt.latency_seconds;
        return std::min(len, std::max<size_t>(1, static_cast<size_t>(n)));
      };
      for (int r = 0; r < opt.runs; ++r)
        for (size_t i = 0; i < opt.ways.size(); ++i) {
          auto p = base;
          p.rate = opt.rate;
          p.events = open_loop_events(opt.rate, max_rate[i]);
          cells[i].at_rate.push_back(measured(opt.ways[i], wl, p));
          p.rate = std::max(1.0, max_rate[i] / 2);
          p.events = open_loop_events(p.rate, max_rate[i]);
          cells[i].at_half.push_back(measured(opt.ways[i], wl, p));
        }
      for (size_t i = 0; i < opt.ways.size(); ++i) {
        auto row = make_row(opt.ways[i], wl_name, work_ns, opt, cells[i],
                            opt.rate, max_rate[i] < opt.rate,
                            std::max(1.0, max_rate[i] / 2));
        on_row(row);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

} // namespace keylane::bench
