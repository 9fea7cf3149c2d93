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

#include "keylane/detail/toml_text.hpp"
#include "keylane/errc.hpp"

namespace keylane {

namespace {

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
  explicit checker(std::string origin) : origin_(std::move(origin)) {
  }

  const std::string& origin() const noexcept {
    return origin_;
  }

  /// Reports "path = value: why".
  void invalid(const entry& e, const std::string& why) {
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
    problems_.push_back(problem{at.line, at.column, std::move(text)});
  }

  std::string origin_;
  std::vector<problem> problems_;
};

// -- reading values -----------------------------------------------------------

/// Bounds of an integer setting.
struct count_rule {
  int64_t min;
  int64_t max;
  /// Whether the string "unbounded" is allowed as well.
  bool unbounded_ok;
};

std::string expectation(const count_rule& r) {
  auto out = r.max == max_int ? ">= " + std::to_string(r.min)
                              : "between " + std::to_string(r.min) + " and "
                                  + std::to_string(r.max);
  if (r.unbounded_ok)
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
      count("window", &settings::window, positive_or_unbounded),
      choice("order", &settings::order, all_orders),
      count("key_backlog", &settings::key_backlog, positive_or_unbounded),
      choice("overflow", &settings::overflow, all_overflows),
      count("lane_batch", &settings::lane_batch, batch_size),
      count("ingress_batch", &settings::ingress_batch, batch_size)}},
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
    {"log", {choice("level", &settings::log, all_levels)}},
  };
  return sections;
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
    std::string known;
    for (const auto& f : sec.fields)
      known += (known.empty() ? "" : ", ") + std::string{f.name};
    c.unknown(sub, "known keys: " + known);
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
      s.params.set(std::string{key.str()}, std::move(*x),
                   source_location{c.origin(), key.source().begin.line});
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
    if (str && !str->get().empty())
      s.handler = str->get();
    else
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
      c.unknown(sub, "known keys: name, and the table [handler.<name>]");
    // Else handler.name is invalid, which is reported already.
  }
}

// Rules that tie keys together, reported at the key that must change.
void check_combinations(checker& c, const toml::table& root,
                        const settings& s) {
  if (s.park != park_mode::sqlite || !s.park_path.empty())
    return;
  auto park = root.find("park");
  if (park == root.end() || !park->second.is_table())
    return;
  auto& tbl = *park->second.as_table();
  auto store = tbl.find("store");
  if (store != tbl.end())
    c.invalid(entry{store->first, store->second, "park.store"},
              "needs park.path, the SQLite file to park events in");
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
      c.unknown(e, "known keys: runtime, scheduler, retry, park, log, handler");
  }
}

caf::error syntax_error(const std::string& origin, const toml::parse_error& e) {
  const auto& at = e.source().begin;
  auto msg = origin;
  if (at.line > 0)
    msg += ':' + std::to_string(at.line) + ':' + std::to_string(at.column);
  msg += ": parse error: ";
  msg += e.description();
  return make_error(errc::invalid_config, std::move(msg));
}

struct file_closer {
  void operator()(std::FILE* f) const noexcept {
    std::fclose(f);
  }
};

} // namespace

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
  toml::table root;
#if TOML_EXCEPTIONS
  try {
    root = toml::parse(text, std::string_view{origin});
  } catch (const toml::parse_error& e) {
    return syntax_error(origin, e);
  }
#else
  auto res = toml::parse(text, std::string_view{origin});
  if (!res)
    return syntax_error(origin, res.error());
  root = std::move(res).table();
#endif
  // Fill a fresh struct and hand it out only if nothing was wrong.
  settings s;
  checker c{origin};
  read_document(c, root, s);
  if (c.ok())
    check_combinations(c, root, s);
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
