// SPDX-License-Identifier: Apache-2.0
#include "keylane/kafka/config_loader.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include <toml++/toml.h>

#include "config_reader.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"

namespace keylane::kafka {

namespace {

using detail::checker;
using detail::read_kafka_key;

void read_kafka(checker& c, const toml::table& kt, size_t table_line,
                source_settings& s) {
  for (const auto& [k, v] : kt)
    read_kafka_key(c, std::string{k.str()}, v, k.source().begin.line, s);
  // The output keys mean nothing without an output topic: a forgotten
  // output_topic would silently produce nothing.
  if (!kt.contains("output_topic"))
    for (const char* k : {"output_tombstones", "output_properties"})
      if (auto n = kt.get(k))
        c.add(n->source().begin.line,
              std::string{"kafka."} + k
                + " is set but kafka.output_topic is not (set "
                  "kafka.output_topic = \"<topic>\" or remove it)");
  if (s.bootstrap_servers.empty() && !kt.contains("bootstrap_servers"))
    c.add(table_line, "kafka.bootstrap_servers is missing (\"host:port\")");
  if (s.group.empty() && !kt.contains("group"))
    c.add(table_line, "kafka.group is missing (the consumer group id)");
  if (s.topics.empty() && !kt.contains("topics"))
    c.add(table_line, "kafka.topics is missing (an array of topic names)");
}
bool is_kafka_header(std::string_view line) {
  auto i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '[')
    return false;
  line.remove_prefix(i + 1);
  if (!line.empty() && line.front() == '[')
    line.remove_prefix(1); // [[kafka...]] arrays of tables, too
  i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos)
    return false;
  line.remove_prefix(i);
  if (line.compare(0, 5, "kafka") != 0)
    return false;
  line.remove_prefix(5);
  i = line.find_first_not_of(" \t");
  return i != std::string_view::npos && (line[i] == ']' || line[i] == '.');
}

bool is_header(std::string_view line) {
  auto i = line.find_first_not_of(" \t");
  return i != std::string_view::npos && line[i] == '[';
}

} // namespace

std::string without_kafka_tables(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool inside = false;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    if (is_header(line))
      inside = is_kafka_header(line);
    if (!inside)
      out += line;
    if (end == std::string_view::npos)
      break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

caf::expected<config> parse(std::string_view text, const std::string& origin) {
  config out;
  out.source.origin = origin;
  toml::table doc;
  if (auto unsafe = check_toml_text(text, origin))
    return unsafe;
  try {
    doc = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    // keylane::parse reports syntax errors in the house format.
    auto rt = keylane::parse(text, origin);
    if (!rt)
      return std::move(rt.error());
    return make_error(errc::invalid_config,
                      origin + ": parse error: "
                        + std::string{e.description()});
  }
  checker c{origin};
  auto node = doc.get("kafka");
  if (!node) {
    c.add(0, "no [kafka] table (bootstrap_servers, group, topics)");
  } else if (auto kt = node->as_table()) {
    read_kafka(c, *kt, kt->source().begin.line, out.source);
  } else {
    c.invalid(*node, "kafka", "must be a table ([kafka])");
  }
  auto rt = keylane::parse(without_kafka_tables(text), origin);
  std::string report = c.ok() ? std::string{} : c.report();
  if (!rt) {
    const auto& ctx = rt.error().context();
    auto theirs = ctx.size() == 1 && ctx.match_element<std::string>(0)
                    ? ctx.get_as<std::string>(0)
                    : render(rt.error());
    if (!report.empty())
      report += '\n';
    report += theirs;
    return make_error(rt.error().code() == static_cast<uint8_t>(
                                             errc::unreadable_config)
                        ? errc::unreadable_config
                        : errc::invalid_config,
                      std::move(report));
  }
  if (!report.empty())
    return make_error(errc::invalid_config, std::move(report));
  out.runtime = std::move(*rt);
  return out;
}

caf::expected<config> load(const std::string& path) {
  auto text = read_config_text(path); // bounded, like keylane::load
  if (!text)
    return std::move(text.error());
  return parse(*text, path);
}

} // namespace keylane::kafka
