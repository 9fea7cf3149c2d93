// SPDX-License-Identifier: Apache-2.0
// The config reader at its limits: overrides that name no key, files too
// large to read, files with very many problems, and text that toml++ 3.3.0
// must not see (non-ASCII where it tests for whitespace).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "keylane/config.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/errc.hpp"

using namespace keylane;
using namespace std::string_literals;

namespace {

namespace fs = std::filesystem;

const std::string how_to_set
  = " (write section.key=value, for example runtime.window=4096; known keys: "
    "runtime, sink, scheduler, retry, park, state, messaging, log, metrics, handler)";

/// The rendered error of applying `assignment` to default settings, which
/// an error must leave unchanged; "no error" when it applies.
std::string override_error(const std::string& assignment) {
  settings s;
  s.window = 77;
  auto err = apply_override(s, assignment);
  if (!err)
    return "no error";
  CHECK(s.window == 77u);
  CHECK(s.origin == settings{}.origin);
  CHECK(err.code() == static_cast<uint8_t>(errc::invalid_config));
  return render(err);
}

std::string error_of(const std::string& text) {
  auto res = parse(text, "t.toml");
  return res ? std::string{"no error"} : render(res.error());
}

/// A fresh file path under the system temp directory, removed at scope exit.
class temp_file {
public:
  temp_file() {
    std::random_device rd;
    path_ = fs::temp_directory_path()
            / ("keylane-config-limits-" + std::to_string(rd()) + ".toml");
  }
  ~temp_file() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  std::string write(const std::string& text) const {
    std::ofstream{path_, std::ios::binary} << text;
    return path_.string();
  }

private:
  fs::path path_;
};

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
}

} // namespace

// -- overrides that name no key -----------------------------------------------

TEST_CASE("an override whose key is a comment is a named error, not a crash",
          "[config][override][limits]") {
  // "#x = 1" is a TOML comment: a document without a key.
  for (auto text : {"#x=1", "#x = 1", "#=", "# =1", "#=#", "  #x=1"}) {
    INFO("--set " << text);
    auto key = std::string{text}.substr(0, std::string{text}.find('='));
    key.erase(0, key.find_first_not_of(' '));
    while (!key.empty() && key.back() == ' ')
      key.pop_back();
    CHECK(override_error(text)
          == "invalid_config: --set " + std::string{text} + ": \"" + key
               + "\" is not a key" + how_to_set);
  }
}

TEST_CASE("overrides that are not one plain key are named errors",
          "[config][override][limits]") {
  CHECK(override_error("a.=1")
        == "invalid_config: --set a.=1: \"a.\" is not a key" + how_to_set);
  CHECK(override_error("[x]=1")
        == "invalid_config: --set [x]=1: \"[x]\" is not a key" + how_to_set);
  CHECK(override_error("[runtime]\nwindow=1")
        == "invalid_config: --set [runtime]\nwindow=1: \"[runtime]\\u000a"
           "window\" is not a key"
             + how_to_set);
  // A comment after the value is TOML: the key is still checked.
  CHECK(override_error("a=1#")
        == "invalid_config: --set a=1#: unknown key a (known keys: runtime, "
           "sink, scheduler, retry, park, state, messaging, log, metrics, handler)");
  // A line break makes the value a string, which the key then refuses.
  CHECK(override_error("runtime.window=1\n")
        == "invalid_config: --set runtime.window=1\n: must be an integer >= "
           "1 (or \"unbounded\" or \"auto\")");
  // NUL bytes: TOML allows none outside an escape, anywhere.
  CHECK_THAT(override_error("runtime.win\0dow=4"s),
             Catch::Contains("is not a key"));
  CHECK_THAT(override_error("#\0=1"s), Catch::Contains("is not a key"));
  CHECK_THAT(override_error("\0=1"s), Catch::Contains("is not a key"));
  CHECK_THAT(override_error("runtime.window=4\0"s),
             Catch::StartsWith("invalid_config: --set runtime.window=4"));
  CHECK(override_error("runtime.window=4") == "no error");
}

// -- file size ----------------------------------------------------------------

TEST_CASE("load refuses a file over max_config_bytes with a named error",
          "[config][load][limits]") {
  temp_file f;
  // A comment fills the file, so only the size can be wrong.
  auto text = "[runtime]\nwindow = 8\n#" + std::string(max_config_bytes, 'x');
  text.resize(max_config_bytes);
  auto path = f.write(text);
  auto res = load(path);
  REQUIRE(res);
  CHECK(res->window == 8);
  path = f.write(text + "\n");
  res = load(path);
  REQUIRE(!res);
  CHECK(res.error().code() == static_cast<uint8_t>(errc::config_too_large));
  CHECK(render(res.error())
        == "config_too_large: " + path
             + ": larger than 1048576 bytes (1 MiB), the most a config file"
               " may have");
}

TEST_CASE("load reads at most max_config_bytes of an endless file",
          "[config][load][limits]") {
  // /dev/zero has no size to stat and never ends.
  auto res = load("/dev/zero");
  REQUIRE(!res);
  CHECK(render(res.error())
        == "config_too_large: /dev/zero: larger than 1048576 bytes (1 MiB), "
           "the most a config file may have");
}

// -- many problems ------------------------------------------------------------

TEST_CASE("a file with very many problems reports the first 50 in file order",
          "[config][errors][limits]") {
  // Unknown keys whose names sort against file order: toml++ iterates a
  // table by name, the report must still follow the file.
  std::string text = "[handler]\nname = \"h\"\n";
  const int n = 2000;
  for (int i = n; i > 0; --i)
    text += "[handler.x" + std::to_string(i) + "]\n";
  auto msg = error_of(text);
  REQUIRE(count_lines(msg) == 51);
  auto first = msg.substr(0, msg.find('\n'));
  CHECK(first
        == "invalid_config: t.toml:3: unknown key handler.x2000 (only "
           "[handler.h], the table of handler.name, is allowed)");
  auto fiftieth = "t.toml:52: unknown key handler.x1951 (only [handler.h], "
                  "the table of handler.name, is allowed)\n"s;
  CHECK_THAT(msg, Catch::Contains(fiftieth));
  CHECK_THAT(msg, Catch::EndsWith("\nt.toml: and 1950 more problems"));
}

TEST_CASE("a file with exactly 50 problems lists them all",
          "[config][errors][limits]") {
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += "k" + std::to_string(i) + " = 1\n";
  auto msg = error_of(text);
  CHECK(count_lines(msg) == 50);
  CHECK_THAT(msg, !Catch::Contains("more problems"));
  text += "k50 = 1\n";
  msg = error_of(text);
  CHECK(count_lines(msg) == 51);
  CHECK_THAT(msg, Catch::EndsWith("\nt.toml: and 1 more problem"));
}

// -- text toml++ must not see -------------------------------------------------

TEST_CASE("a non-ASCII character outside strings and comments is a parse "
          "error at its position",
          "[config][errors][limits]") {
  // A Cyrillic "о" (U+043E) in a key: toml++ 3.3.0 would test it for
  // whitespace and reach __builtin_unreachable.
  CHECK(error_of("[runtime]\nwind\xd0\xbew = 4\n")
        == "invalid_config: t.toml:2:5: parse error: non-ASCII character "
           "U+043E outside a string or comment (TOML is ASCII there: quote "
           "the key or the string, or check for a look-alike letter)");
  CHECK_THAT(error_of("\xd0\xbe = 1\n"),
             Catch::StartsWith("invalid_config: t.toml:1:1: parse error: "
                               "non-ASCII character U+043E"));
  CHECK_THAT(error_of("a = 1 \xc2\xa1\n"),
             Catch::StartsWith("invalid_config: t.toml:1:7: parse error: "
                               "non-ASCII character U+00A1"));
  CHECK_THAT(error_of("a = \xff\n"),
             Catch::StartsWith("invalid_config: t.toml:1:5: parse error: "));
}

TEST_CASE("a non-ASCII character after a quote in an unquoted value is refused",
          "[config][errors][limits]") {
  // toml++ scans a value that starts unquoted up to a space, ']', '}', ','
  // or '#' to guess its type, and tests every character on the way, the
  // quote and what follows it included (found by fuzz_config_parse).
  CHECK_THAT(error_of("a = 38\"8\xc8\xbf\"\n"),
             Catch::StartsWith("invalid_config: t.toml:1:9: parse error: "
                               "non-ASCII character U+023F outside"));
  CHECK_THAT(error_of("a = [1, x'\xd0\xbe']\n"),
             Catch::StartsWith("invalid_config: t.toml:1:11: parse error: "
                               "non-ASCII character U+043E outside"));
  CHECK_THAT(error_of("a = {b = 1979-05-27 07\"\xd0\xbe\"}\n"),
             Catch::StartsWith("invalid_config: t.toml:1:24: parse error: "
                               "non-ASCII character U+043E outside"));
  // After a date, a space and one digit, toml++ takes the next character
  // even when it ends the value, and scans on to the next terminator
  // (found by fuzz_config_round_trip).
  CHECK_THAT(error_of("a = 1979-05-27 8\nb\"\xd0\xbe\" = 1\n"),
             Catch::StartsWith("invalid_config: t.toml:2:3: parse error: "
                               "non-ASCII character U+043E outside"));
  CHECK_THAT(error_of("a = 1979-05-27 8#\xd0\xbe\n"),
             Catch::StartsWith("invalid_config: t.toml:1:18: parse error: "
                               "non-ASCII character U+043E outside"));
  CHECK_THAT(error_of("a = 1979-05-27 8 \"\xd0\xbe\"\n"),
             Catch::StartsWith("invalid_config: t.toml:1:19: parse error: "
                               "non-ASCII character U+043E outside"));
  CHECK_THAT(error_of("a = 1979-05-27 8\xd0\xbe\n"),
             Catch::StartsWith("invalid_config: t.toml:1:17: parse error: "
                               "non-ASCII character U+043E outside"));
  // A comment after a whole date-time is still a comment.
  CHECK_THAT(error_of("[handler]\nname = \"h\"\n[handler.h]\n"
                      "t = 1979-05-27 07:32:00 # \xd0\xbe\n"),
             Catch::Contains("t.toml:4: handler.h.t = 1979-05-27"));
  // The fuzzer's own input.
  std::string found = "[handler]\nname = \"h\"\n[handler.h]\nt = 38"
                      + std::string(19, '\x16') + "=\x16" + std::string(26, '8')
                      + ".\x00"s + std::string(17, '8') + "\"88\xc8\xbf" "888";
  CHECK_THAT(error_of(found), Catch::Contains("non-ASCII character U+023F"));
}

TEST_CASE("non-ASCII text in strings and comments still parses",
          "[config][limits]") {
  auto res = parse("# w\xd0\xbe\n[handler]\nname = \"h\xd0\xbe\" # \xe2\x82\xac\n"
                   "[handler.\"h\xd0\xbe\"]\n"
                   "a = 'x\xd0\xbe'\nb = \"\"\"\xd0\xbe\"\"\"\n"
                   "c = '''\xd0\xbe'''\nd = \"\"\"q\"\"\xd0\xbe\"\"\"\n"
                   "e = \"\"\"\\\n  x\xd0\xbe\"\"\"\n",
                   "t.toml");
  REQUIRE(res);
  CHECK(res->handler == "h\xd0\xbe");
  CHECK(res->params.get_string("a", "") == "x\xd0\xbe");
  CHECK(res->params.get_string("b", "") == "\xd0\xbe");
  CHECK(res->params.get_string("c", "") == "\xd0\xbe");
  CHECK(res->params.get_string("d", "") == "q\"\"\xd0\xbe");
  CHECK(res->params.get_string("e", "") == "x\xd0\xbe");
  // Strings as keys and values wherever TOML has them, without spaces.
  res = parse("[handler]\nname=\"\xd0\xbe\"\n[handler.\"\xd0\xbe\"]\n"
              "a.\"\xd0\xbe\"=1\nb=[\"\xd0\xbe\",[\'\xd0\xbe\'],{c=\"\xd0\xbe\"}]\n"
              "d={e=[1,\n2],f=\"\xd0\xbe\"}\n",
              "t.toml");
  CHECK((res ? std::string{"ok"} : render(res.error()))
        == "invalid_config: t.toml:4: handler.\"\xd0\xbe\".a = {...}: must be"
           " a bool, integer, float or string\n"
           "t.toml:5: handler.\"\xd0\xbe\".b = [...]: must be a bool, integer,"
           " float or string\n"
           "t.toml:6: handler.\"\xd0\xbe\".d = {...}: must be a bool, integer,"
           " float or string");
  // A UTF-8 byte order mark is not text.
  CHECK(error_of("\xef\xbb\xbf[runtime]\nwindow = 4\n") == "no error");
}

TEST_CASE("a non-ASCII character toml++ would test for whitespace inside a "
          "multi-line string is refused",
          "[config][errors][limits]") {
  // After a backslash, and first on a line that a line-ending backslash
  // continues: toml++ asks whether it is whitespace there.
  CHECK_THAT(error_of("a = \"\"\"\\\xd0\xbe\"\"\"\n"),
             Catch::StartsWith("invalid_config: t.toml:1:9: parse error: "
                               "non-ASCII character U+043E"));
  CHECK_THAT(error_of("a = \"\"\"x\\\n\n   \xd0\xbe\"\"\"\n"),
             Catch::StartsWith("invalid_config: t.toml:3:4: parse error: "
                               "non-ASCII character U+043E right after a "
                               "line-ending backslash"));
  // Whitespace toml++ knows beyond ASCII (here U+FEFF) is skipped there
  // too, and the character after it asked about (found by
  // fuzz_config_parse).
  CHECK_THAT(error_of("a = \"\"\"a\\\n \xef\xbb\xbf \xd0\xbe\"\"\"\n"),
             Catch::StartsWith("invalid_config: t.toml:2:4: parse error: "
                               "non-ASCII character U+043E right after a "
                               "line-ending backslash"));
  // The quotes that close a multi-line string, up to five, are its own.
  CHECK_THAT(error_of("a = \"\"\"x\"\"\"\"\xd0\xbe\n"),
             Catch::StartsWith("invalid_config: t.toml:1:13: parse error: "
                               "non-ASCII character U+043E outside"));
}

TEST_CASE("an override key with a non-ASCII letter is not a key, and a value "
          "with one is a string",
          "[config][override][limits]") {
  CHECK(override_error("runtime.wind\xd0\xbew=4")
        == "invalid_config: --set runtime.wind\xd0\xbew=4: \"runtime.wind"
           "\xd0\xbew\" is not a key"
             + how_to_set);
  settings s;
  REQUIRE(!apply_override(s, "park.path=/tmp/\xd0\xbe.db"));
  CHECK(s.park_path == "/tmp/\xd0\xbe.db");
}
