#include "keylane/kafka/config_loader.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include <librdkafka/rdkafka.h>
#include <toml++/toml.h>

#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"

namespace keylane::kafka {

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

/// Collects the problems of the `[kafka]` table, rendered in file order.
class checker {
public:
  explicit checker(std::string origin) : origin_(std::move(origin)) {}

  void add(size_t line, std::string text) {
    problems_.push_back({line, std::move(text)});
  }

  void invalid(const toml::node& n, const std::string& path,
               const std::string& why) {
    add(n.source().begin.line, path + " = " + describe(n) + ": " + why);
  }

  [[nodiscard]] bool ok() const noexcept { return problems_.empty(); }

  [[nodiscard]] std::string report() const {
    auto sorted = problems_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) {
                       return a.first < b.first;
                     });
    std::string out;
    for (const auto& [line, text] : sorted) {
      if (!out.empty())
        out += '\n';
      out += origin_;
      if (line > 0)
        out += ':' + std::to_string(line);
      out += ": " + text;
    }
    return out;
  }

private:
  std::string origin_;
  std::vector<std::pair<size_t, std::string>> problems_;
};

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
  std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)> conf{
    rd_kafka_conf_new(), &rd_kafka_conf_destroy};
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
    char err[512];
    if (rd_kafka_conf_set(conf.get(), name.c_str(), text.c_str(), err,
                          sizeof err)
        != RD_KAFKA_CONF_OK) {
      c.invalid(v, path, std::string{"librdkafka: "} + err);
      continue;
    }
    out[name] = text;
  }
}

void read_kafka(checker& c, const toml::table& kt, size_t table_line,
                source_settings& s) {
  for (const auto& [k, v] : kt) {
    std::string key{k.str()};
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
        continue;
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
      c.add(k.source().begin.line,
            "unknown key " + path
              + " (kafka keys: bootstrap_servers, group, topics, key, "
                "commit_interval_ms, revoke_timeout_ms, max_uncommitted, "
                "output_topic, output_tombstones, [kafka.properties], "
                "[kafka.output_properties])");
    }
  }
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
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(errc::unreadable_config,
                      path + ": cannot open the config file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path);
}

} // namespace keylane::kafka
