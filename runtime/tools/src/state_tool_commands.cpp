// SPDX-License-Identifier: Apache-2.0
#include "state_tool_commands.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>
#include <utility>

#include "keylane/detail/state_record.hpp"
#include "keylane/detail/text_format.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

std::string cell(const key& k) {
  return k.is_integer() || !k.str().empty() ? printable(k.to_string())
                                            : "\"\"";
}

const char* kind(const key& k) {
  return k.is_integer() ? "integer" : "string";
}

/// `ms` since the epoch in ISO-8601 UTC with milliseconds; a time that
/// system_clock (nanoseconds) cannot hold is shown as the number.
std::string iso_ms(int64_t ms) {
  constexpr int64_t limit = INT64_MAX / 1'000'000 - 1;
  if (ms < -limit || ms > limit)
    return "out of range (" + std::to_string(ms) + " ms since the epoch)";
  return iso_utc(std::chrono::system_clock::time_point{
                   std::chrono::milliseconds{ms}},
                 3);
}

/// Why the record of `k` did not decode: the key, then the error.
std::string damaged(const key& k, const caf::error& err) {
  return describe_key(k) + ": " + render(err);
}

/// The JSON object of `show` and `export`. With a renderer, "state" holds
/// its JSON, or "state_error" its failure, which `failed` then carries too.
std::string json_object(const key& k, const state_record& r,
                        const state_renderer& renderer,
                        std::optional<tool_failure>& failed) {
  std::string out = "{\"key\":" + json_string(k.to_string())
                    + ",\"key_kind\":\"" + kind(k) + "\",\"events\":"
                    + std::to_string(r.events) + ",\"origins\":{";
  for (size_t i = 0; i < r.origins.size(); ++i)
    out += (i > 0 ? "," : "") + json_string(r.origins[i].first) + ":"
           + std::to_string(r.origins[i].second);
  out += "},\"taken_at\":\"" + iso_ms(r.taken_at_ms)
         + "\",\"state_bytes\":" + std::to_string(r.state.size())
         + ",\"state_base64\":\"" + base64(r.state) + "\"";
  if (renderer) {
    auto text = renderer(r.state);
    if (text && !text->empty()) {
      // JSON allows no raw line break inside a string, so outside strings
      // they are whitespace: a space keeps the line and the meaning.
      for (auto& c : *text)
        if (c == '\n' || c == '\r')
          c = ' ';
      out += ",\"state\":" + *text;
    } else {
      auto why = text ? std::string{"the renderer returned nothing"}
                      : render(text.error());
      out += ",\"state_error\":" + json_string(why);
      failed = tool_failure{tool_exit_failed,
                            describe_key(k) + ": cannot render the state: "
                              + why};
    }
  }
  return out + "}";
}

} // namespace

std::string describe_key(const key& k) {
  if (k.is_integer())
    return "integer key " + k.to_string();
  std::string quoted;
  for (char c : printable(k.str())) // printable escapes `\`, not `"`
    quoted += c == '"' ? std::string{"\\\""} : std::string(1, c);
  return "string key \"" + quoted + "\"";
}

std::optional<tool_failure>
list_states(state_store& store, const std::string& dir, tool_output& io) {
  text_table table{{"KEY", "KIND", "EVENTS", "TAKEN AT", "STATE BYTES"},
                   {2, 4}};
  size_t good = 0, broken = 0;
  auto err = store.scan([&](const key& k, std::string_view bytes) {
    auto r = decode_state_record(bytes);
    if (!r) {
      ++broken;
      io.err << io.prog << ": " << damaged(k, r.error()) << '\n';
      return true;
    }
    ++good;
    table.add({cell(k), kind(k), std::to_string(r->events),
               iso_ms(r->taken_at_ms), std::to_string(r->state.size())});
    return true;
  });
  if (err)
    return tool_failure{tool_exit_failed, render(err)};
  if (good + broken == 0) {
    io.out << "no keyed state in " << dir << '\n';
    return std::nullopt;
  }
  if (good > 0)
    table.print(io.out);
  io.out << good << (good == 1 ? " key" : " keys");
  if (broken > 0)
    io.out << ", and " << broken << " damaged";
  io.out << '\n';
  if (broken == 0)
    return std::nullopt;
  return tool_failure{tool_exit_failed,
                      std::to_string(broken) + " of the "
                        + std::to_string(good + broken) + " records in "
                        + dir
                        + (broken == 1 ? " is" : " are")
                        + " damaged (named above); erase resets a key"};
}

std::optional<tool_failure>
show_state(state_store& store, const std::string& dir, const key& k,
           const state_renderer& renderer, tool_output& io) {
  auto bytes = store.read(k);
  if (!bytes)
    return tool_failure{tool_exit_failed, render(bytes.error())};
  if (!*bytes) {
    io.out << describe_key(k) << ": no state in " << dir << '\n';
    return std::nullopt;
  }
  auto r = decode_state_record(**bytes);
  if (!r)
    return tool_failure{tool_exit_failed,
                        damaged(k, r.error()) + "; erase resets the key"};
  std::optional<tool_failure> failed;
  io.out << json_object(k, *r, renderer, failed) << '\n';
  return failed;
}

std::optional<tool_failure>
export_states(state_store& store, const std::string& dir,
              const std::optional<key>& only, const state_renderer& renderer,
              tool_output& io) {
  size_t broken = 0, unrendered = 0, total = 0;
  auto one = [&](const key& k, std::string_view bytes) {
    ++total;
    auto r = decode_state_record(bytes);
    if (!r) {
      ++broken;
      io.err << io.prog << ": " << damaged(k, r.error()) << '\n';
      return;
    }
    std::optional<tool_failure> failed;
    io.out << json_object(k, *r, renderer, failed) << '\n';
    if (failed) {
      ++unrendered;
      io.err << io.prog << ": " << failed->message << '\n';
    }
  };
  if (only) {
    auto bytes = store.read(*only);
    if (!bytes)
      return tool_failure{tool_exit_failed, render(bytes.error())};
    if (*bytes)
      one(*only, **bytes);
  } else {
    auto err = store.scan([&](const key& k, std::string_view bytes) {
      one(k, bytes);
      return true;
    });
    if (err)
      return tool_failure{tool_exit_failed, render(err)};
  }
  if (broken + unrendered == 0)
    return std::nullopt;
  std::string what;
  if (broken > 0)
    what = std::to_string(broken) + " damaged (not exported)";
  if (unrendered > 0)
    what += (what.empty() ? "" : ", ") + std::to_string(unrendered)
            + " whose state could not be rendered (exported with"
              " \"state_error\")";
  return tool_failure{tool_exit_failed,
                      "of the " + std::to_string(total) + " records in " + dir
                        + ", " + what + "; see above"};
}

std::optional<tool_failure> erase_state(state_store& store,
                                        const std::string& dir, const key& k,
                                        tool_output& io) {
  auto erased = store.erase(k);
  if (!erased)
    return tool_failure{tool_exit_failed, render(erased.error())};
  if (*erased)
    io.out << "erased the state of " << describe_key(k) << " from " << dir
           << '\n';
  else
    io.out << describe_key(k) << ": no state in " << dir
           << "; nothing erased\n";
  return std::nullopt;
}

} // namespace keylane::detail
