// SPDX-License-Identifier: Apache-2.0
#include "keylane/config.hpp"

#include <algorithm>
#include <utility>

#include "keylane/detail/toml_text.hpp"

namespace keylane {

namespace {

// "an integer", "a string", ... for "must be X, not Y" messages.
const char* type_name(const param_value& x) {
  switch (x.index()) {
    case 0: return "a bool";
    case 1: return "an integer";
    case 2: return "a float";
    default: return "a string";
  }
}

} // namespace

// -- handler_params -----------------------------------------------------------

void handler_params::set(std::string name, param_value value,
                         source_location where) {
  where_[name] = std::move(where);
  values_[std::move(name)] = std::move(value);
}

bool handler_params::contains(const std::string& name) const {
  return values_.count(name) != 0;
}

int64_t handler_params::get_int(const std::string& name,
                                int64_t fallback) const {
  auto i = values_.find(name);
  if (i == values_.end())
    return fallback;
  used_.insert(name);
  if (auto x = std::get_if<int64_t>(&i->second))
    return *x;
  reject(name, std::string{"must be an integer, not "} + type_name(i->second));
  return fallback;
}

double handler_params::get_double(const std::string& name,
                                  double fallback) const {
  auto i = values_.find(name);
  if (i == values_.end())
    return fallback;
  used_.insert(name);
  if (auto x = std::get_if<double>(&i->second))
    return *x;
  if (auto x = std::get_if<int64_t>(&i->second))
    return static_cast<double>(*x);
  reject(name, std::string{"must be a number, not "} + type_name(i->second));
  return fallback;
}

bool handler_params::get_bool(const std::string& name, bool fallback) const {
  auto i = values_.find(name);
  if (i == values_.end())
    return fallback;
  used_.insert(name);
  if (auto x = std::get_if<bool>(&i->second))
    return *x;
  reject(name, std::string{"must be true or false, not "}
                 + type_name(i->second));
  return fallback;
}

std::string handler_params::get_string(const std::string& name,
                                       std::string fallback) const {
  auto i = values_.find(name);
  if (i == values_.end())
    return fallback;
  used_.insert(name);
  if (auto x = std::get_if<std::string>(&i->second))
    return *x;
  reject(name, std::string{"must be a string, not "} + type_name(i->second));
  return fallback;
}

void handler_params::reject(const std::string& name, std::string why) const {
  // A rejected key was read, so it must not also show up as unknown.
  if (contains(name))
    used_.insert(name);
  // Reading the same bad key twice is still one problem for the user.
  auto same = [&](const problem& p) { return p.key == name && p.why == why; };
  if (std::none_of(problems_.begin(), problems_.end(), same))
    problems_.push_back(problem{name, std::move(why)});
}

std::vector<std::string>
handler_params::problems(const std::string& handler) const {
  // "file:line: " when the loader recorded where the key came from.
  auto prefix = [this](const std::string& key) {
    std::string out;
    auto i = where_.find(key);
    if (i == where_.end() || i->second.file.empty())
      return out;
    out = i->second.file;
    if (i->second.line > 0)
      out += ':' + std::to_string(i->second.line);
    out += ": ";
    return out;
  };
  auto path = "handler." + detail::toml_key(handler) + '.';
  std::vector<std::string> out;
  for (const auto& p : problems_) {
    auto line = prefix(p.key) + path + detail::toml_key(p.key);
    if (auto i = values_.find(p.key); i != values_.end())
      line += " = " + detail::toml_value(i->second);
    out.push_back(line + ": " + p.why);
  }
  auto hint = " (handler " + detail::toml_quoted(handler)
              + " does not read it; check the spelling or remove it)";
  for (const auto& [key, value] : values_)
    if (used_.count(key) == 0)
      out.push_back(prefix(key) + "unknown key " + path
                    + detail::toml_key(key) + hint);
  return out;
}

// -- enum names ---------------------------------------------------------------

const char* to_string(order_mode x) noexcept {
  switch (x) {
    case order_mode::global: return "global";
    case order_mode::per_key: return "per_key";
    case order_mode::none: return "none";
  }
  return "unknown";
}

const char* to_string(overflow_policy x) noexcept {
  switch (x) {
    case overflow_policy::reject: return "reject";
    case overflow_policy::block: return "block";
  }
  return "unknown";
}

const char* to_string(scheduler_policy x) noexcept {
  switch (x) {
    case scheduler_policy::sharing: return "sharing";
    case scheduler_policy::stealing: return "stealing";
  }
  return "unknown";
}

const char* to_string(log_level x) noexcept {
  switch (x) {
    case log_level::error: return "error";
    case log_level::warning: return "warning";
    case log_level::info: return "info";
    case log_level::debug: return "debug";
  }
  return "unknown";
}

const char* to_string(jitter_mode x) noexcept {
  switch (x) {
    case jitter_mode::none: return "none";
    case jitter_mode::full: return "full";
  }
  return "unknown";
}

const char* to_string(output_thread x) noexcept {
  switch (x) {
    case output_thread::consumer: return "consumer";
    case output_thread::sink: return "sink";
    case output_thread::automatic: return "auto";
  }
  return "unknown";
}

const char* to_string(state_backend x) noexcept {
  switch (x) {
    case state_backend::none: return "none";
    case state_backend::memory: return "memory";
    case state_backend::rocksdb: return "rocksdb";
  }
  return "?";
}

const char* to_string(state_sync x) noexcept {
  switch (x) {
    case state_sync::checkpoint: return "checkpoint";
    case state_sync::every_event: return "every_event";
  }
  return "?";
}

const char* to_string(state_recovery x) noexcept {
  switch (x) {
    case state_recovery::strict: return "strict";
    case state_recovery::point_in_time: return "point_in_time";
  }
  return "?";
}

const char* to_string(park_mode x) noexcept {
  switch (x) {
    case park_mode::memory: return "memory";
    case park_mode::sqlite: return "sqlite";
    case park_mode::none: return "none";
  }
  return "unknown";
}

} // namespace keylane
