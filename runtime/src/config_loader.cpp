#include "keylane/config_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "config_reader.hpp"
#include "keylane/detail/toml_text.hpp"
#include "keylane/errc.hpp"

namespace keylane {

namespace {

using detail::combination;
using detail::toml_key;
using detail::toml_quoted;
using detail::toml_value;

constexpr int64_t max_int = std::numeric_limits<int64_t>::max();

std::optional<param_value> to_param(const toml::node& n) {
  if (auto v = n.as_boolean())
    return param_value{v->get()};
  if (auto v = n.as_integer())
    return param_value{v->get()};
  if (auto v = n.as_floating_point())
    return param_value{v->get()};
  if (auto v = n.as_string())
    return param_value{v->get()};
  return std::nullopt;
}

// The value in TOML spelling, short enough for a one-line message.
std::string describe(const toml::node& n) {
  if (auto p = to_param(n))
    return toml_value(*p);
  if (n.is_array())
    return "[...]";
  if (n.is_table())
    return "{...}";
  std::ostringstream os; // dates and times
  n.visit([&os](const auto& x) { os << x; });
  return os.str();
}

// -- collecting problems ------------------------------------------------------

/// One key of the document, its value and its dotted path ("runtime.window").
struct entry {
  const toml::key& key;
  const toml::node& value;
  std::string path;
};

/// Collects every problem of one document, then renders them in file order.
class checker {
public:
  /// Checks a file; problems read "origin:line: path = value: why".
  explicit checker(std::string origin) : origin_(std::move(origin)) {
  }

  /// Checks the one-key document of the override `assignment` of `path`;
  /// problems at that key read "--set assignment: why", since the
  /// assignment shows key and value already.
  checker(std::string_view assignment, std::string path)
    : origin_("--set " + std::string{assignment}),
      override_path_(std::move(path)),
      is_override_(true) {
  }

  /// Where `key` was written, kept with handler params for later messages.
  source_location where(const toml::key& key) const {
    return {origin_, is_override_ ? 0 : key.source().begin.line};
  }

  /// Reports "path = value: why".
  void invalid(const entry& e, const std::string& why) {
    if (is_override_ && e.path == override_path_)
      add(e, why);
    else
      add(e, e.path + " = " + describe(e.value) + ": " + why);
  }

  /// Reports "unknown key path (hint)".
  void unknown(const entry& e, const std::string& hint) {
    add(e, "unknown key " + e.path + " (" + hint + ")");
  }

  [[nodiscard]] bool ok() const noexcept {
    return problems_.empty();
  }

  /// All problems, one "file:line: ..." line each, sorted by position.
  [[nodiscard]] std::string report() const {
    auto sorted = problems_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const problem& a, const problem& b) {
                       return std::tie(a.line, a.column)
                              < std::tie(b.line, b.column);
                     });
    std::string out;
    for (const auto& p : sorted) {
      if (!out.empty())
        out += '\n';
      out += origin_;
      if (p.line > 0)
        out += ':' + std::to_string(p.line);
      out += ": " + p.text;
    }
    return out;
  }

private:
  struct problem {
    size_t line;
    size_t column;
    std::string text;
  };

  void add(const entry& e, std::string text) {
    const auto& at = e.key.source().begin;
    // An override is one line of our making: its position means nothing.
    problems_.push_back(
      problem{is_override_ ? 0 : at.line, at.column, std::move(text)});
  }

  std::string origin_;
  std::string override_path_;
  bool is_override_ = false;
  std::vector<problem> problems_;
};

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
constexpr park_mode all_park_modes[] = {park_mode::memory, park_mode::sqlite,
                                        park_mode::none};
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

/// One key of a section: how to read it into the settings and spell it back.
struct field {
  const char* name;
  std::function<void(checker&, const entry&, settings&)> read;
  std::function<std::string(const settings&)> write;
};

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

/// A table of the file with all its keys.
struct section {
  const char* name;
  std::vector<field> fields;
};

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
            positive_or_unbounded)}},
    {"scheduler",
     {choice("policy", &settings::scheduler, all_policies),
      count("threads", &settings::threads, {0, 1024, false}),
      count("max_throughput", &settings::max_throughput, positive)}},
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
    {"log",
     {choice("level", &settings::log, all_levels),
      count("stall_ms", &settings::stall_ms, {0, 86400000, false})}},
    {"metrics",
     {text("listen", &settings::metrics_listen),
      flag("latency", &settings::metrics_latency)}},
  };
  return sections;
}

/// "known keys: runtime, scheduler, ..., handler", the top-level tables.
std::string known_sections() {
  std::string out = "known keys: ";
  for (const auto& sec : schema())
    out += std::string{sec.name} + ", ";
  return out + "handler";
}

/// "known keys: a, b, c" of the table `name` (a section or "handler").
std::string known_keys(std::string_view name) {
  if (name == "handler")
    return "known keys: name, and the table [handler.<name>]";
  std::string out;
  for (const auto& sec : schema())
    if (name == sec.name)
      for (const auto& f : sec.fields)
        out += (out.empty() ? "" : ", ") + std::string{f.name};
  return "known keys: " + out;
}

void read_section(checker& c, const entry& e, const section& sec,
                  settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([" + e.path + "])");
    return;
  }
  for (const auto& [key, value] : *tbl) {
    entry sub{key, value, e.path + '.' + toml_key(key.str())};
    auto is_key = [name = key.str()](const field& f) { return name == f.name; };
    auto i = std::find_if(sec.fields.begin(), sec.fields.end(), is_key);
    if (i != sec.fields.end()) {
      i->read(c, sub, s);
      continue;
    }
    c.unknown(sub, known_keys(sec.name));
  }
}

// Fills `s.params` from `[handler.<name>]`; any scalar is allowed, since only
// the handler knows its keys (it reports the ones it does not read).
void read_params(checker& c, const entry& e, settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([" + e.path + "]) of the handler's keys");
    return;
  }
  for (const auto& [key, value] : *tbl) {
    entry sub{key, value, e.path + '.' + toml_key(key.str())};
    if (auto x = to_param(value))
      s.params.set(std::string{key.str()}, std::move(*x), c.where(key));
    else
      c.invalid(sub, "must be a bool, integer, float or string");
  }
}

void read_handler(checker& c, const entry& e, settings& s) {
  auto tbl = e.value.as_table();
  if (!tbl) {
    c.invalid(e, "must be a table ([handler])");
    return;
  }
  // The name decides which sub-table is allowed, so it goes first.
  auto name = tbl->find("name");
  if (name != tbl->end()) {
    entry sub{name->first, name->second, "handler.name"};
    auto str = sub.value.as_string();
    if (str && !str->get().empty()) {
      // Params belong to one handler: naming another (an override) drops
      // them.
      if (s.handler != str->get())
        s.params = handler_params{};
      s.handler = str->get();
    } else
      c.invalid(sub, "must be a non-empty string naming a registered handler");
  }
  for (const auto& [key, value] : *tbl) {
    if (key == "name")
      continue;
    entry sub{key, value, "handler." + toml_key(key.str())};
    if (!s.handler.empty() && key == s.handler)
      read_params(c, sub, s);
    else if (!s.handler.empty() && value.is_table())
      c.unknown(sub, "only [handler." + toml_key(s.handler)
                       + "], the table of handler.name, is allowed");
    else if (name == tbl->end() && value.is_table())
      c.unknown(sub, "set handler.name = " + toml_quoted(key.str())
                       + " to configure this handler, or remove the table");
    else if (!value.is_table())
      c.unknown(sub, known_keys("handler"));
    // Else handler.name is invalid, which is reported already.
  }
}

// "host:port", the host non-empty (an IPv6 host in brackets).
bool valid_listen(const std::string& x) {
  auto colon = x.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == x.size()
      || x.size() - colon - 1 > 5)
    return false;
  auto port = x.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(),
                   [](char ch) { return ch >= '0' && ch <= '9'; }))
    return false;
  auto n = std::stoi(port);
  return n >= 1 && n <= 65535;
}

const std::vector<combination>& combinations() {
  static const std::vector<combination> rules{
    {"metrics", "listen", {"metrics.listen"}, [](const settings& s) {
       return std::string{
         s.metrics_listen.empty() || valid_listen(s.metrics_listen)
           ? ""
           : "must be \"host:port\" with a port from 1 to 65535, e.g. "
             "\"127.0.0.1:9464\" (or \"\" for no endpoint)"};
     }},
    {"sink", "spill_path", {"sink.spill_path", "runtime.order",
                            "runtime.window"},
     [](const settings& s) {
       if (s.spill_path.empty())
         return std::string{};
       if (s.order != order_mode::global)
         return std::string{"needs runtime.order = \"global\" (the other "
                            "orders hold no results back)"};
       if (s.window_auto)
         return std::string{"and runtime.window = \"auto\" are "
                            "alternatives: spill keeps the window fixed in "
                            "memory and admits beyond it"};
       return std::string{};
     }},
    {"park", "store", {"park.store", "park.path"}, [](const settings& s) {
       return std::string{s.park == park_mode::sqlite && s.park_path.empty()
                            ? "needs park.path, the SQLite file to park "
                              "events in"
                            : ""};
     }},
  };
  return rules;
}

void check_combinations(checker& c, const toml::table& root,
                        const settings& s) {
  for (const auto& rule : combinations()) {
    auto why = rule.why(s);
    auto sec = root.find(rule.section);
    if (why.empty() || sec == root.end() || !sec->second.is_table())
      continue;
    auto& tbl = *sec->second.as_table();
    auto at = tbl.find(rule.key);
    if (at != tbl.end())
      c.invalid(entry{at->first, at->second,
                      std::string{rule.section} + '.' + rule.key},
                why);
  }
}

void read_document(checker& c, const toml::table& root, settings& s) {
  for (const auto& [key, value] : root) {
    entry e{key, value, toml_key(key.str())};
    auto is_key = [name = key.str()](const section& x) {
      return name == x.name;
    };
    auto i = std::find_if(schema().begin(), schema().end(), is_key);
    if (i != schema().end())
      read_section(c, e, *i, s);
    else if (key == "handler")
      read_handler(c, e, s);
    else
      c.unknown(e, known_sections());
  }
}

caf::error syntax_error(std::string_view origin, const toml::parse_error& e) {
  const auto& at = e.source().begin;
  auto msg = std::string{origin};
  if (at.line > 0)
    msg += ':' + std::to_string(at.line) + ':' + std::to_string(at.column);
  msg += ": parse error: ";
  msg += e.description();
  return make_error(errc::invalid_config, std::move(msg));
}

/// Parses TOML text `origin` names; a syntax error goes to `err`.
std::optional<toml::table> parse_table(std::string_view text,
                                       std::string_view origin,
                                       caf::error& err) {
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    err = syntax_error(origin, e);
    return std::nullopt;
  }
#else
  auto res = toml::parse(text, origin);
  if (res)
    return std::move(res).table();
  err = syntax_error(origin, res.error());
  return std::nullopt;
#endif
}

struct file_closer {
  void operator()(std::FILE* f) const noexcept {
    std::fclose(f);
  }
};

} // namespace

namespace detail {

std::string known_sections() {
  return keylane::known_sections();
}

std::string known_keys(std::string_view table) {
  return keylane::known_keys(table);
}

bool is_table_name(std::string_view name) {
  return name == "handler"
         || std::any_of(schema().begin(), schema().end(),
                        [name](const section& x) { return name == x.name; });
}

std::optional<toml::table> parse_table(std::string_view text,
                                       std::string_view origin,
                                       caf::error& err) {
  return keylane::parse_table(text, origin, err);
}

std::string read_override(const toml::table& doc, settings& s,
                          std::string_view assignment,
                          const std::string& path) {
  checker c{assignment, path};
  read_document(c, doc, s);
  return c.ok() ? std::string{} : c.report();
}

const std::vector<combination>& combinations() {
  return keylane::combinations();
}

std::vector<std::pair<std::string, std::string>> flatten(const settings& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& sec : schema())
    for (const auto& f : sec.fields)
      out.emplace_back(std::string{sec.name} + '.' + f.name, f.write(s));
  out.emplace_back("handler.name", toml_quoted(s.handler));
  for (const auto& [key, value] : s.params.values())
    out.emplace_back("handler." + toml_key(s.handler) + '.' + toml_key(key),
                     toml_value(value));
  return out;
}

} // namespace detail

caf::expected<settings> load(const std::string& path) {
  auto fail = [&path](int code) {
    return make_error(errc::unreadable_config,
                      path + ": cannot read file: "
                        + (code != 0 ? std::strerror(code) : "read error"));
  };
  std::unique_ptr<std::FILE, file_closer> f{std::fopen(path.c_str(), "rb")};
  if (!f)
    return fail(errno);
  std::string text;
  char buf[8192];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0)
    text.append(buf, n);
  if (std::ferror(f.get()))
    return fail(errno); // a directory opens fine and fails here (EISDIR)
  return parse(text, path);
}

caf::expected<settings> parse(std::string_view text,
                              const std::string& origin) {
  caf::error err;
  auto root = parse_table(text, origin, err);
  if (!root)
    return err;
  // Fill a fresh struct and hand it out only if nothing was wrong.
  settings s;
  checker c{origin};
  read_document(c, *root, s);
  if (c.ok())
    check_combinations(c, *root, s);
  if (!c.ok())
    return make_error(errc::invalid_config, c.report());
  s.origin = origin;
  return s;
}

std::string to_toml(const settings& s) {
  std::ostringstream os;
  os << "# keylane settings from " << toml_quoted(s.origin) << '\n';
  for (const auto& sec : schema()) {
    os << "\n[" << sec.name << "]\n";
    for (const auto& f : sec.fields)
      os << f.name << " = " << f.write(s) << '\n';
  }
  // Parameters without a handler name have no table to live in.
  if (s.handler.empty())
    return os.str();
  os << "\n[handler]\n"
     << "name = " << toml_quoted(s.handler) << '\n';
  if (!s.params.values().empty()) {
    os << "\n[handler." << toml_key(s.handler) << "]\n";
    for (const auto& [key, value] : s.params.values())
      os << toml_key(key) << " = " << toml_value(value) << '\n';
  }
  return os.str();
}

} // namespace keylane
