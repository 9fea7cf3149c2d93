// SPDX-License-Identifier: Apache-2.0
// Command-line overrides of a config with a [kafka] table: kafka.* keys are
// read by the [kafka] readers, every other key by keylane's own overrides.

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "config_reader.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"
#include "keylane/kafka/config_loader.hpp"

namespace keylane::kafka {

namespace {

// The value as TOML ("4096", "\"x\"", "true"), or a bare word as a string,
// under the key "v" of the returned table.
toml::table value_table(const std::string& value) {
  auto text = "v = " + value;
  // Text toml++ cannot parse safely is not TOML here either: a bare word.
  if (!check_toml_text(text, "--set")) {
    try {
      auto t = toml::parse(text);
      if (t.size() == 1 && t.contains("v"))
        return t;
    } catch (const toml::parse_error&) {
      // not TOML: a bare word
    }
  }
  toml::table t;
  t.insert("v", value);
  return t;
}

// Reads one "kafka.<key>=<value>" into `s`, or adds its problem to `c`.
void apply_kafka(detail::checker& c, const std::string& assignment,
                 source_settings& s, bool& output_keys) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos) {
    c.add(0, "missing \"=\" (write kafka.key=value, for example "
             "kafka.commit_interval_ms=250)");
    return;
  }
  auto key = assignment.substr(6, eq - 6); // after "kafka."
  auto value = value_table(assignment.substr(eq + 1));
  for (const char* table : {"properties", "output_properties"}) {
    std::string prefix = std::string{table} + '.';
    if (key.compare(0, prefix.size(), prefix) == 0) {
      // kafka.properties.<librdkafka name>: the name keeps its dots.
      toml::table props;
      props.insert(key.substr(prefix.size()), *value.get("v"));
      detail::read_kafka_key(c, table, props, 0, s);
      output_keys = output_keys || std::string{table} == "output_properties";
      return;
    }
  }
  detail::read_kafka_key(c, key, *value.get("v"), 0, s);
  output_keys = output_keys || key == "output_tombstones";
}

} // namespace

caf::error apply_overrides(config& cfg,
                           const std::vector<std::string>& assignments) {
  auto source = cfg.source;
  std::vector<std::string> runtime_sets;
  std::string report;
  bool any_kafka = false;
  for (const auto& a : assignments) {
    if (a.compare(0, 6, "kafka.") != 0) {
      runtime_sets.push_back(a);
      continue;
    }
    any_kafka = true;
    // One checker per override, so each message names its override.
    detail::checker c{"--set " + a, false};
    bool output_keys = false;
    apply_kafka(c, a, source, output_keys);
    if (output_keys && source.output_topic.empty())
      c.add(0, "kafka.output_topic is not set (set kafka.output_topic "
               "first, in the file or with --set)");
    if (!c.ok())
      report += (report.empty() ? "" : "\n") + c.report();
  }
  auto runtime = cfg.runtime;
  if (auto err = keylane::apply_overrides(runtime, runtime_sets)) {
    const auto& ctx = err.context();
    report += (report.empty() ? "" : "\n")
              + (ctx.size() == 1 && ctx.match_element<std::string>(0)
                   ? ctx.get_as<std::string>(0)
                   : render(err));
  }
  if (!report.empty())
    return make_error(errc::invalid_config, std::move(report));
  if (any_kafka)
    source.origin += " + --set";
  cfg.source = std::move(source);
  cfg.runtime = std::move(runtime);
  return caf::none;
}

} // namespace keylane::kafka
