// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <type_traits>

namespace keylane::bench {

namespace {

// Every serialised field of a row, for the record format and JSON.
template <class F>
void visit_fields(row& r, F&& f) {
  f("way", r.way);
  f("workload", r.workload);
  f("work_ns", r.work_ns);
  f("scheduler", r.scheduler);
  f("allocator", r.allocator);
  f("producers", r.producers);
  f("ordered", r.ordered);
  f("runs", r.runs);
  f("events", r.events);
  f("events_per_s", r.events_per_s);
  f("cpu_ns_per_event", r.cpu_ns_per_event);
  f("rate_per_s", r.rate);
  f("overloaded", r.overloaded);
  f("p50_us", r.p50_us);
  f("p99_us", r.p99_us);
  f("p999_us", r.p999_us);
  f("pacer_p99_us", r.pacer_p99_us);
  f("half_rate_per_s", r.half_rate);
  f("pacer_p99_us_half", r.pacer_p99_half_us);
  f("p50_us_half", r.p50_half_us);
  f("p99_us_half", r.p99_half_us);
  f("p999_us_half", r.p999_half_us);
  f("peak_rss_mb", r.peak_rss_mb);
  f("base_rss_mb", r.base_rss_mb);
  f("idle_rss_mb", r.idle_rss_mb);
  f("lanes_per_event", r.lanes_per_event);
  f("violations", r.violations);
  f("completed", r.completed);
  f("other_load_pct", r.other_load_pct);
  f("notes", r.notes);
  f("keylane_set", r.keylane_set);
  f("rejected_submits", r.rejected_submits);
  f("cs_per_event", r.cs_per_event);
  f("threads", r.threads);
  f("way_threads", r.way_threads);
  f("cores_busy", r.cores_busy);
}

// The keyed-state fields, after the others: in a record always, in JSON
// only for a stateful row.
template <class F>
void visit_state_fields(row& r, F&& f) {
  f("state_store", r.state_store);
  f("state_loads", r.state_loads);
  f("state_load_p50_us", r.state_load_p50_us);
  f("state_load_p99_us", r.state_load_p99_us);
  f("state_load_mean_us", r.state_load_mean_us);
  f("state_writes", r.state_writes);
  f("state_write_bytes", r.state_write_bytes);
  f("state_checkpoints", r.state_checkpoints);
  f("state_writes_per_s", r.state_writes_per_s);
  f("state_failures", r.state_failures);
}

template <class F>
void visit_record_fields(row& r, F&& f) {
  visit_fields(r, f);
  visit_state_fields(r, f);
}

std::string num(double x) {
  if (!std::isfinite(x))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

std::string clean(std::string s) {
  for (auto& c : s)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return s;
}

// "1.23M", "456k", "789": three significant digits.
std::string si(double x) {
  char buf[32];
  if (x >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3gM", x / 1e6);
  else if (x >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3gk", x / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// The largest distance of min or max from the median, in % of it.
int spread_pct(const figure& f) {
  if (!std::isfinite(f.median) || !std::isfinite(f.max))
    return 0;
  if (f.median <= 0)
    return 0;
  double d = std::max(f.max - f.median, f.median - f.min);
  return static_cast<int>(std::lround(100.0 * d / f.median));
}

std::string cell(const figure& f) {
  auto pct = spread_pct(f);
  return si(f.median) + " ±" + (pct > 999 ? std::string{"999+"} : std::to_string(pct));
}

std::string pad(const std::string& s, size_t w) {
  // "±" is two bytes but one column.
  size_t cols = 0;
  for (unsigned char c : s)
    cols += (c & 0xC0) != 0x80;
  return cols >= w ? s : std::string(w - cols, ' ') + s;
}

std::string lpad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// A load latency bucket bound: "<=10", or ">10s" for the unbounded one.
std::string bound_us(double x) {
  return std::isfinite(x) ? "<=" + si(x) : std::string{">10s"};
}

// The keyed-state figures of a stateful row, one line.
std::string state_line(const row& r) {
  char buf[128];
  std::snprintf(buf, sizeof buf, " (mean %.1f)", r.state_load_mean_us.median);
  auto mb = r.state_write_bytes.median / (1 << 20);
  char mbs[32];
  std::snprintf(mbs, sizeof mbs, "%.2f MiB", mb);
  auto out = "state (" + r.state_store + "): " + cell(r.state_loads)
             + " loads, p50 " + bound_us(r.state_load_p50_us.median)
             + " / p99 " + bound_us(r.state_load_p99_us.median) + " us" + buf
             + "; " + cell(r.state_writes) + " writes (" + mbs + ") in "
             + cell(r.state_checkpoints) + " batches, "
             + cell(r.state_writes_per_s) + " writes/s";
  if (r.state_failures != 0)
    out += "; " + std::to_string(r.state_failures) + " FAILED loads/writes";
  return out;
}

} // namespace

figure summarize(std::vector<double> xs) {
  figure f;
  if (xs.empty())
    return f;
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  f.median = n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
  f.min = xs.front();
  f.max = xs.back();
  return f;
}

void print_table(std::ostream& out, const run_info& info,
                 const std::vector<row>& rows) {
  char buf[512];
  out << "keylane_bench — " << info.machine << "\n";
  out << "allocator: " << info.allocator_note << "\n";
  out << "peak RSS: " << info.peak_rss_note << "\n";
  out << "caf_naive: " << info.caf_note << "\n";
  out << "keylane: " << info.keylane_note << "\n";
  std::snprintf(buf, sizeof buf,
                "runs per figure: %d (median, ±: largest deviation of min or "
                "max from it, %% of the median); %llu events per throughput "
                "run;\nopen-loop runs of up to %.1f s at %.0f events/s and at "
                "half of each way's measured maximum; 1 us of work = %llu "
                "xorshift rounds\n",
                info.runs, static_cast<unsigned long long>(info.events),
                info.latency_seconds, info.rate,
                static_cast<unsigned long long>(info.work_iters_1us));
  out << buf;
  std::snprintf(buf, sizeof buf,
                "other load: 1-min load average %.2f before the run; other "
                "processes took up to %.0f %% of the machine during a "
                "measurement%s\n",
                info.load_before, info.other_load_max_pct,
                info.other_load_max_pct > 10
                  ? " — rows marked '!' ran beside more than 10 % other load"
                  : " (quiet)");
  out << buf;
  out << "latency: us from scheduled submit time to output (open loop); "
         "'ovl': the offered rate is above the way's measured maximum, so the "
         "queue\ngrows for the whole run (runs then offer only what the way "
         "can do in the run time)\n";
  // A sweep of worker-thread counts gets a column for each row's.
  bool by_threads = info.threads.size() > 1;
  std::string last_group;
  for (auto& r : rows) {
    auto group = r.workload + ", work " + (r.work_ns ? "~1 us" : "0");
    if (group != last_group) {
      last_group = group;
      out << "\n== " << group << "\n";
      out << lpad("way", 38) << (by_threads ? pad("threads", 8) : "")
          << pad("events/s", 13) << pad("cpu ns/ev", 13)
          << pad("p50", 13) << pad("p99", 13) << pad("p99.9", 13) << " @"
          << lpad("rate", 6) << pad("p50", 13) << pad("p99", 13)
          << pad("p99.9", 13) << " @" << lpad("half", 7) << pad("peakMB", 12)
          << pad("idleMB", 12) << pad("baseMB", 8) << pad("lanes/ev", 9)
          << pad("cs/ev", 12) << pad("viol", 7) << pad("load%", 7) << "\n";
    }
    auto name = r.way;
    if (!r.scheduler.empty())
      name += " " + r.scheduler;
    if (r.way.rfind("keylane", 0) == 0)
      name += " " + r.allocator;
    if (r.other_load_pct.max > 10)
      name += " !";
    auto rate = (r.overloaded ? std::string{"ovl"} : si(r.rate))
                + (r.pacer_p99_us.median > 1000 ? "~" : "");
    auto half = si(r.half_rate) + (r.pacer_p99_half_us.median > 1000 ? "~" : "");
    out << lpad(name, 38)
        << (by_threads ? pad(std::to_string(r.threads), 8) : "")
        << pad(cell(r.events_per_s), 13)
        << pad(cell(r.cpu_ns_per_event), 13) << pad(cell(r.p50_us), 13)
        << pad(cell(r.p99_us), 13) << pad(cell(r.p999_us), 13) << " @"
        << lpad(rate, 6) << pad(cell(r.p50_half_us), 13)
        << pad(cell(r.p99_half_us), 13) << pad(cell(r.p999_half_us), 13)
        << " @" << lpad(half, 7) << pad(cell(r.peak_rss_mb), 12)
        << pad(cell(r.idle_rss_mb), 12) << pad(si(r.base_rss_mb.median), 8)
        << pad(r.lanes_per_event.median > 0 ? si(r.lanes_per_event.median) : "-", 9)
        << pad(cell(r.cs_per_event), 12)
        << pad(std::to_string(r.violations) + (r.ordered ? "" : "u"), 7)
        << pad(std::to_string(static_cast<int>(r.other_load_pct.median)), 7)
        << "\n";
    if (r.rejected_submits != 0)
      out << "    " << r.rejected_submits
          << " submits rejected (overflow = reject) and retried\n";
    if (!r.state_store.empty())
      out << "    " << state_line(r) << "\n";
    if (!r.completed || !r.notes.empty())
      out << "    " << (r.completed ? "" : "INCOMPLETE: ") << r.notes << "\n";
  }
  out << "\nviol: per-key order violations over all runs ('u': unordered by "
         "contract, reported only). events/s and cpu ns/ev: closed-loop runs; "
         "peak/idle/base RSS: MiB at the\nrun's peak, after all lanes retired "
         "(+ a short pause), and before the way started. lanes/ev: lanes started per event (keylane, caf_lanes_capped). cs/ev: context switches of the process per event (closed loop). '~' after a rate: the "
         "pacer submitted >1 ms late at p99,\nbecause the way "
         "blocked submit (backpressure) or the machine did not run the pacer "
         "on time; the latencies include that wait. load%: median share of the "
         "machine busy with other processes.\n";
  if (by_threads)
    out << "threads: the way's worker threads (--threads); single_loop runs "
           "on the producer thread, once, as 1.\n";
}

void print_markdown(std::ostream& out, const run_info& info,
                    const std::vector<row>& rows) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Machine: %s. Allocator: %s. Other load: 1-min load average "
                "%.2f at the start; other processes used up to %.0f %% of "
                "the machine during a measurement. %d runs per figure "
                "(median ±largest deviation in %% of it); wall time %.0f s.\n\n",
                info.machine.c_str(), info.allocator_note.c_str(),
                info.load_before, info.other_load_max_pct, info.runs,
                info.seconds);
  out << buf << "keylane ways: " << info.keylane_note << ".\n";
  std::string last_group;
  for (auto& r : rows) {
    auto group = r.workload + ", handler work " + (r.work_ns ? "~1 µs" : "0");
    if (group != last_group) {
      last_group = group;
      out << "\n**" << group << "**\n\n"
          << "| way | events/s | CPU ns/event | p50 / p99 / p99.9 µs at "
          << si(info.rate) << "/s | p99 µs at half max (rate) | peak / idle / "
             "base RSS MiB | lanes/event | context switches/event | violations | "
             "other load % |\n"
          << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    }
    auto name = "`" + r.way + "`";
    if (!r.scheduler.empty())
      name += " " + r.scheduler;
    if (r.way.rfind("keylane", 0) == 0 && r.allocator == "system")
      name += " (system malloc)";
    if (info.threads.size() > 1)
      name += ", " + std::to_string(r.threads)
              + (r.threads == 1 ? " thread" : " threads");
    out << "| " << name << " | " << cell(r.events_per_s) << " | "
        << cell(r.cpu_ns_per_event) << " | " << si(r.p50_us.median) << " / "
        << cell(r.p99_us) << " / " << si(r.p999_us.median)
        << (r.overloaded ? " (overloaded)" : "") << " | "
        << cell(r.p99_half_us) << " (" << si(r.half_rate) << "/s) | "
        << si(r.peak_rss_mb.median) << " / " << si(r.idle_rss_mb.median)
        << " / " << si(r.base_rss_mb.median) << " | "
        << (r.lanes_per_event.median > 0 ? si(r.lanes_per_event.median) : "–")
        << " | " << cell(r.cs_per_event)
        << " | " << r.violations << (r.ordered ? "" : " (unordered)") << " | "
        << static_cast<int>(r.other_load_pct.median) << " |\n";
    if (r.rejected_submits != 0)
      out << "| ↳ " << r.rejected_submits
          << " submits rejected (overflow = reject) and retried | | | | | | "
             "| | | |\n";
    if (!r.state_store.empty())
      out << "| ↳ " << state_line(r) << " | | | | | | | | | |\n";
    if (!r.completed)
      out << "| ↳ INCOMPLETE: " << r.notes << " | | | | | | | | | |\n";
  }
}

void print_json(std::ostream& out, const std::vector<row>& rows) {
  out << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    auto r = rows[i];
    std::string obj = "{", spread;
    auto put = [&](const char* name, auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::string>) {
        if (std::string{name} == "scheduler" && v.empty())
          return; // keylane rows only
        obj += quoted(name) + ": " + quoted(v) + ", ";
      } else if constexpr (std::is_same_v<T, bool>) {
        obj += quoted(name) + ": " + (v ? "true" : "false") + ", ";
      } else if constexpr (std::is_same_v<T, figure>) {
        obj += quoted(name) + ": " + num(v.median) + ", ";
        spread += (spread.empty() ? "" : ", ") + quoted(name) + ": ["
                  + num(v.min) + ", " + num(v.max) + "]";
      } else if constexpr (std::is_integral_v<T>) {
        obj += quoted(name) + ": " + std::to_string(v) + ", ";
      } else {
        obj += quoted(name) + ": " + num(v) + ", ";
      }
    };
    visit_fields(r, put);
    if (!r.state_store.empty())
      visit_state_fields(r, put);
    obj += "\"spread\": {" + spread + "}}";
    out << "  " << obj << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

std::string to_record(const row& r0) {
  auto r = r0;
  std::string line;
  visit_record_fields(r, [&](const char* name, auto& v) {
    using T = std::decay_t<decltype(v)>;
    line += (line.empty() ? "" : "\t") + std::string{name} + "=";
    if constexpr (std::is_same_v<T, std::string>)
      line += clean(v);
    else if constexpr (std::is_same_v<T, bool>)
      line += v ? "1" : "0";
    else if constexpr (std::is_same_v<T, figure>)
      line += num(v.median) + "," + num(v.min) + "," + num(v.max);
    else if constexpr (std::is_integral_v<T>)
      line += std::to_string(v);
    else
      line += num(v);
  });
  return line;
}

bool from_record(const std::string& line, row& r) {
  std::istringstream in{line};
  std::string field;
  int seen = 0;
  while (std::getline(in, field, '\t')) {
    auto eq = field.find('=');
    if (eq == std::string::npos)
      return false;
    auto key = field.substr(0, eq);
    auto val = field.substr(eq + 1);
    visit_record_fields(r, [&](const char* name, auto& v) {
      if (key != name)
        return;
      ++seen;
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::string>) {
        v = val;
      } else if constexpr (std::is_same_v<T, bool>) {
        v = val == "1";
      } else if constexpr (std::is_same_v<T, figure>) {
        std::sscanf(val.c_str(), "%lf,%lf,%lf", &v.median, &v.min, &v.max);
      } else {
        v = static_cast<T>(std::strtod(val.c_str(), nullptr));
      }
    });
  }
  return seen > 0 && !r.way.empty();
}

} // namespace keylane::bench
