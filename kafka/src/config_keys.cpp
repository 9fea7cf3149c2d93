// SPDX-License-Identifier: Apache-2.0
// The readers of each [kafka] key and of librdkafka property tables.

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>

#include "config_reader.hpp"
#include "rdkafka.hpp"

namespace keylane::kafka::detail {

namespace {

// Properties the source owns: giving them here would break the offset
// guarantee (auto commit) or duplicate a [kafka] key.
const char* owned_property(const std::string& name) {
  if (name == "enable.auto.commit" || name == "enable.auto.offset.store")
    return "the source commits finished offsets itself";
  if (name == "group.id")
    return "use kafka.group";
  if (name == "bootstrap.servers" || name == "metadata.broker.list")
    return "use kafka.bootstrap_servers";
  return nullptr;
}

// Properties the output topic's producer owns.
const char* owned_output_property(const std::string& name) {
  if (name == "enable.idempotence")
    return "the output producer is always idempotent (ordered, no "
           "duplicates from its own retries)";
  if (name == "bootstrap.servers" || name == "metadata.broker.list")
    return "the output goes to kafka.bootstrap_servers";
  return nullptr;
}


std::optional<size_t> read_count(checker& c, const toml::node& n,
                                 const std::string& path, int64_t min) {
  auto v = n.as_integer();
  if (!v || v->get() < min) {
    c.invalid(n, path, "must be an integer >= " + std::to_string(min));
    return std::nullopt;
  }
  return static_cast<size_t>(v->get());
}

std::optional<std::string> read_word(checker& c, const toml::node& n,
                                     const std::string& path,
                                     const char* what) {
  auto v = n.as_string();
  if (!v || v->get().empty()) {
    c.invalid(n, path, std::string{"must be a non-empty string ("} + what
                         + ")");
    return std::nullopt;
  }
  return v->get();
}

// Reads `[kafka.<table>]` of librdkafka properties into `out`; `owned`
// names those the source sets itself.
void read_properties(checker& c, const toml::node& n, const std::string& table,
                     const char* (*owned)(const std::string&),
                     std::map<std::string, std::string>& out) {
  auto tbl = n.as_table();
  if (!tbl) {
    c.invalid(n, "kafka." + table,
              "must be a table ([kafka." + table + "]) of librdkafka "
              "properties");
    return;
  }
  // librdkafka knows its own property names and value syntax: ask it.
  auto conf = rdkafka::new_conf();
  for (const auto& [k, v] : *tbl) {
    std::string name{k.str()};
    auto path = "kafka." + table + ".\"" + name + '"';
    std::string text;
    if (auto x = v.as_string())
      text = x->get();
    else if (auto x = v.as_integer())
      text = std::to_string(x->get());
    else if (auto x = v.as_boolean())
      text = x->get() ? "true" : "false";
    else if (v.is_floating_point())
      text = describe(v);
    else {
      c.invalid(v, path, "must be a string, integer, float or bool");
      continue;
    }
    if (auto why = owned(name)) {
      c.invalid(v, path, std::string{"not allowed here: "} + why);
      continue;
    }
    if (auto err = rdkafka::set(*conf, name, text)) {
      c.invalid(v, path, "librdkafka: " + *err);
      continue;
    }
    out[name] = text;
  }
}

} // namespace

std::string describe(const toml::node& n) {
  if (auto v = n.as_string())
    return '"' + v->get() + '"';
  if (auto v = n.as_integer())
    return std::to_string(v->get());
  if (auto v = n.as_boolean())
    return v->get() ? "true" : "false";
  if (auto v = n.as_floating_point()) {
    std::ostringstream os;
    os << v->get();
    return os.str();
  }
  if (n.is_array())
    return "[...]";
  if (n.is_table())
    return "{...}";
  std::ostringstream os;
  n.visit([&os](const auto& x) { os << x; });
  return os.str();
}

void read_kafka_key(checker& c, const std::string& key, const toml::node& v,
                    size_t line, source_settings& s) {
  auto path = "kafka." + key;
  if (key == "bootstrap_servers") {
    if (auto x = read_word(c, v, path, "\"host:port[,host:port...]\""))
      s.bootstrap_servers = *x;
  } else if (key == "group") {
    if (auto x = read_word(c, v, path, "the consumer group id"))
      s.group = *x;
  } else if (key == "topics") {
    auto arr = v.as_array();
    bool good = arr && !arr->empty();
    if (good)
      for (const auto& t : *arr)
        good = good && t.as_string() && !t.as_string()->get().empty();
    if (!good) {
      c.invalid(v, path, "must be a non-empty array of topic names");
      return;
    }
    s.topics.clear();
    for (const auto& t : *arr)
      s.topics.push_back(t.as_string()->get());
  } else if (key == "key") {
    auto x = v.as_string();
    static const std::string hdr = "header:";
    if (x && x->get() == "key") {
      s.key = key_from::record_key;
    } else if (x && x->get().size() > hdr.size()
               && x->get().compare(0, hdr.size(), hdr) == 0) {
      s.key = key_from::header;
      s.key_header = x->get().substr(hdr.size());
    } else {
      c.invalid(v, path, "must be \"key\" or \"header:<name>\"");
    }
  } else if (key == "commit_interval_ms") {
    if (auto x = read_count(c, v, path, 1))
      s.commit_interval_ms = *x;
  } else if (key == "revoke_timeout_ms") {
    if (auto x = read_count(c, v, path, 0))
      s.revoke_timeout_ms = *x;
  } else if (key == "max_uncommitted") {
    if (auto x = read_count(c, v, path, 1))
      s.max_uncommitted = *x;
  } else if (key == "output_topic") {
    if (auto x = read_word(c, v, path, "a topic name"))
      s.output_topic = *x;
  } else if (key == "changelog_topic") {
    if (auto x = read_word(c, v, path, "a topic name"))
      s.changelog_topic = *x;
  } else if (key == "output_tombstones") {
    auto x = v.as_string();
    if (x && x->get() == "mark")
      s.tombstones = tombstone_output::mark;
    else if (x && x->get() == "skip")
      s.tombstones = tombstone_output::skip;
    else
      c.invalid(v, path, "must be \"mark\" or \"skip\"");
  } else if (key == "properties") {
    read_properties(c, v, "properties", owned_property, s.properties);
  } else if (key == "output_properties") {
    read_properties(c, v, "output_properties", owned_output_property,
                    s.output_properties);
  } else {
    c.add(line,
          "unknown key " + path
            + " (kafka keys: bootstrap_servers, group, topics, key, "
              "commit_interval_ms, revoke_timeout_ms, max_uncommitted, "
              "output_topic, output_tombstones, changelog_topic, "
              "[kafka.properties], "
              "[kafka.output_properties])");
  }
}

} // namespace keylane::kafka::detail
