// SPDX-License-Identifier: Apache-2.0
#include "config_schema.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "keylane/detail/toml_text.hpp"

namespace keylane::detail {

namespace {

constexpr int64_t max_int = std::numeric_limits<int64_t>::max();

// -- reading values -----------------------------------------------------------

/// Bounds of an integer setting.
struct count_rule {
  int64_t min;
  int64_t max;
  /// Whether the string "unbounded" is allowed as well.
  bool unbounded_ok;
  /// Whether "auto" is allowed as well (read by the field itself).
  bool auto_ok = false;
};

std::string expectation(const count_rule& r) {
  auto out = r.max == max_int ? ">= " + std::to_string(r.min)
                              : "between " + std::to_string(r.min) + " and "
                                  + std::to_string(r.max);
  if (r.unbounded_ok && r.auto_ok)
    out += " (or \"unbounded\" or \"auto\")";
  else if (r.unbounded_ok)
    out += " (or \"unbounded\")";
  return out;
}

void read_count(checker& c, const entry& e, count_rule r, size_t& out) {
  auto str = e.value.as_string();
  if (r.unbounded_ok && str && str->get() == "unbounded") {
    out = unbounded;
    return;
  }
  auto num = e.value.as_integer();
  if (!num)
    c.invalid(e, "must be an integer " + expectation(r));
  else if (num->get() < r.min || num->get() > r.max)
    c.invalid(e, "must be " + expectation(r));
  else
    out = static_cast<size_t>(num->get());
}

template <class Enum, size_t N>
void read_choice(checker& c, const entry& e, const Enum (&all)[N], Enum& out) {
  if (auto str = e.value.as_string())
    for (auto x : all)
      if (str->get() == to_string(x)) {
        out = x;
        return;
      }
  std::string why = "must be one of ";
  for (size_t i = 0; i < N; ++i)
    why += (i > 0 ? ", " : "") + toml_quoted(to_string(all[i]));
  c.invalid(e, why);
}

constexpr order_mode all_orders[] = {order_mode::global, order_mode::per_key,
                                     order_mode::none};
constexpr overflow_policy all_overflows[] = {overflow_policy::block,
                                             overflow_policy::reject};
constexpr scheduler_policy all_policies[] = {scheduler_policy::sharing,
                                             scheduler_policy::stealing};
constexpr jitter_mode all_jitters[] = {jitter_mode::none, jitter_mode::full};
constexpr output_thread all_output_threads[] = {
  output_thread::consumer, output_thread::sink, output_thread::automatic};
constexpr park_mode all_park_modes[] = {park_mode::memory, park_mode::sqlite,
                                        park_mode::none};
constexpr state_backend all_state_backends[] = {
  state_backend::none, state_backend::memory, state_backend::rocksdb};
constexpr state_sync all_state_syncs[] = {state_sync::checkpoint,
                                          state_sync::every_event};
constexpr state_recovery all_state_recoveries[] = {
  state_recovery::strict, state_recovery::point_in_time};
constexpr log_level all_levels[] = {log_level::error, log_level::warning,
                                    log_level::info, log_level::debug};

// TOML integers stop at 2^63-1; larger counts are effectively unbounded.
std::string count_text(size_t x, bool unbounded_ok) {
  if (x > static_cast<size_t>(max_int))
    return unbounded_ok ? "\"unbounded\"" : std::to_string(max_int);
  return std::to_string(x);
}

constexpr count_rule positive{1, max_int, false};
constexpr count_rule positive_or_unbounded{1, max_int, true};
constexpr count_rule batch_size{1, 1000000, false};



field count(const char* name, size_t settings::*member, count_rule rule) {
  return {name,
          [member, rule](checker& c, const entry& e, settings& s) {
            read_count(c, e, rule, s.*member);
          },
          [member, rule](const settings& s) {
            return count_text(s.*member, rule.unbounded_ok);
          }};
}

template <class Enum, size_t N>
field choice(const char* name, Enum settings::*member, const Enum (&all)[N]) {
  return {name,
          [member, &all](checker& c, const entry& e, settings& s) {
            read_choice(c, e, all, s.*member);
          },
          [member](const settings& s) {
            return toml_quoted(to_string(s.*member));
          }};
}

field real(const char* name, double settings::*member, double min,
           double max) {
  return {name,
          [member, min, max](checker& c, const entry& e, settings& s) {
            std::optional<double> x;
            if (auto d = e.value.as_floating_point())
              x = d->get();
            else if (auto i = e.value.as_integer())
              x = static_cast<double>(i->get());
            auto range = "must be a number between " + detail::toml_double(min)
                         + " and " + detail::toml_double(max);
            if (!x || !(*x >= min && *x <= max))
              c.invalid(e, range);
            else
              s.*member = *x;
          },
          [member](const settings& s) { return detail::toml_double(s.*member); }};
}

field text(const char* name, std::string settings::*member) {
  return {name,
          [member](checker& c, const entry& e, settings& s) {
            if (auto str = e.value.as_string())
              s.*member = str->get();
            else
              c.invalid(e, "must be a string");
          },
          [member](const settings& s) { return toml_quoted(s.*member); }};
}

field flag(const char* name, bool settings::*member) {
  return {name,
          [member](checker& c, const entry& e, settings& s) {
            if (auto b = e.value.as_boolean())
              s.*member = b->get();
            else
              c.invalid(e, "must be true or false");
          },
          [member](const settings& s) {
            return std::string{s.*member ? "true" : "false"};
          }};
}

// runtime.window: a count, "unbounded", or "auto" (sized by the runtime).
field window_field() {
  return {"window",
          [](checker& c, const entry& e, settings& s) {
            auto str = e.value.as_string();
            if (str && str->get() == "auto") {
              s.window_auto = true;
              return;
            }
            s.window_auto = false;
            read_count(c, e, {1, max_int, true, true}, s.window);
          },
          [](const settings& s) {
            return s.window_auto ? std::string{"\"auto\""}
                                 : count_text(s.window, true);
          }};
}

} // namespace

// The schema of everything but [handler], in the order `to_toml` writes it.
// A function-local static, so loading from a static initializer works too.
const std::vector<section>& schema() {
  static const std::vector<section> sections{
    {"runtime",
     {count("max_active_keys", &settings::max_active_keys, positive),
      window_field(),
      count("window_max", &settings::window_max, positive),
      choice("order", &settings::order, all_orders),
      count("key_backlog", &settings::key_backlog, positive_or_unbounded),
      choice("overflow", &settings::overflow, all_overflows),
      count("lane_batch", &settings::lane_batch, batch_size),
      count("ingress_batch", &settings::ingress_batch, batch_size),
      count("lane_linger_ms", &settings::lane_linger_ms,
            {0, 86400000, false})}},
    {"sink",
     {text("spill_path", &settings::spill_path),
      count("spill_max_bytes", &settings::spill_max_bytes,
            positive_or_unbounded),
      choice("output_thread", &settings::output_thread, all_output_threads)}},
    {"scheduler",
     {choice("policy", &settings::scheduler, all_policies),
      count("threads", &settings::threads, {0, 1024, false}),
      count("max_throughput", &settings::max_throughput, positive),
      count("shards", &settings::shards, {0, 1024, false}),
      flag("move_idle_lanes", &settings::move_idle_lanes)}},
    {"retry",
     {count("max_attempts", &settings::max_attempts, {1, 1000000, false}),
      count("initial_backoff_ms", &settings::initial_backoff_ms,
            {0, 86400000, false}),
      real("multiplier", &settings::backoff_multiplier, 1.0, 1000.0),
      count("max_backoff_ms", &settings::max_backoff_ms, {0, 86400000, false}),
      choice("jitter", &settings::jitter, all_jitters),
      count("attempt_timeout_ms", &settings::attempt_timeout_ms,
            {0, 86400000, false})}},
    {"park",
     {choice("store", &settings::park, all_park_modes),
      text("path", &settings::park_path)}},
    {"state",
     {choice("store", &settings::state_store, all_state_backends),
      text("path", &settings::state_path),
      choice("recover", &settings::state_recover, all_state_recoveries),
      count("checkpoint_ms", &settings::state_checkpoint_ms,
            {1, 86400000, false}),
      count("checkpoint_events", &settings::state_checkpoint_events,
            {0, max_int, false}),
      choice("sync", &settings::state_sync_mode, all_state_syncs),
      count("cache_bytes", &settings::state_cache_bytes, {0, max_int, false}),
      flag("rollback", &settings::state_rollback)}},
    {"messaging",
     {count("max_in_flight", &settings::messaging_max_in_flight,
            {1, max_int, false}),
      count("max_timers", &settings::messaging_max_timers,
            {1, max_int, false}),
      flag("exactly_once", &settings::messaging_exactly_once)}},
    {"log",
     {choice("level", &settings::log, all_levels),
      count("stall_ms", &settings::stall_ms, {0, 86400000, false})}},
    {"metrics",
     {text("listen", &settings::metrics_listen),
      flag("latency", &settings::metrics_latency),
      count("threads", &settings::metrics_threads, {1, 1024, false})}},
  };
  return sections;
}

} // namespace keylane::detail
