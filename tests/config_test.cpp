// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "keylane/config.hpp"
#include "keylane/config_loader.hpp"
#include "keylane/reload.hpp"
#include "keylane/errc.hpp"
#include "temp_dir.hpp"

using namespace keylane;
using test_support::temp_dir;

namespace {

namespace fs = std::filesystem;

/// Parses `text` as file "t.toml"; fails the test on error.
settings parsed(const std::string& text) {
  auto res = parse(text, "t.toml");
  if (!res)
    FAIL(render(res.error()));
  return std::move(*res);
}

/// Parses `text` as file "t.toml" and returns the rendered error, or
/// "no error" when it parses.
std::string error_of(const std::string& text) {
  auto res = parse(text, "t.toml");
  return res ? std::string{"no error"} : render(res.error());
}

void require_equal(const settings& a, const settings& b) {
  CHECK(a.max_active_keys == b.max_active_keys);
  CHECK(a.window == b.window);
  CHECK(a.order == b.order);
  CHECK(a.key_backlog == b.key_backlog);
  CHECK(a.overflow == b.overflow);
  CHECK(a.lane_batch == b.lane_batch);
  CHECK(a.ingress_batch == b.ingress_batch);
  CHECK(a.lane_linger_ms == b.lane_linger_ms);
  CHECK(a.scheduler == b.scheduler);
  CHECK(a.threads == b.threads);
  CHECK(a.max_throughput == b.max_throughput);
  CHECK(a.shards == b.shards);
  CHECK(a.move_idle_lanes == b.move_idle_lanes);
  CHECK(a.max_attempts == b.max_attempts);
  CHECK(a.initial_backoff_ms == b.initial_backoff_ms);
  CHECK(a.backoff_multiplier == b.backoff_multiplier);
  CHECK(a.max_backoff_ms == b.max_backoff_ms);
  CHECK(a.jitter == b.jitter);
  CHECK(a.attempt_timeout_ms == b.attempt_timeout_ms);
  CHECK(a.park == b.park);
  CHECK(a.park_path == b.park_path);
  CHECK(a.log == b.log);
  CHECK(a.handler == b.handler);
  CHECK(a.params.values() == b.params.values());
}

/// A case of a bad file and the complete message it must produce.
struct bad_case {
  std::string text;
  std::string message;
};

void check_all(const std::vector<bad_case>& cases) {
  for (const auto& c : cases) {
    INFO("file:\n" << c.text);
    CHECK(error_of(c.text) == "invalid_config: " + c.message);
  }
}

} // namespace

// -- valid files --------------------------------------------------------------

TEST_CASE("an empty file yields the default settings", "[config]") {
  auto s = parsed("");
  require_equal(s, settings{});
  CHECK(s.origin == "t.toml");
  require_equal(parsed("# only a comment\n\n[runtime]\n[log]\n"), settings{});
}

TEST_CASE("every runtime key is read from its table", "[config]") {
  auto s = parsed(R"([runtime]
max_active_keys = 8
window = 64
order = "per_key"
key_backlog = 10000
overflow = "reject"
lane_batch = 1000000
ingress_batch = 1
)");
  CHECK(s.max_active_keys == 8);
  CHECK(s.window == 64);
  CHECK(s.order == order_mode::per_key);
  CHECK(s.key_backlog == 10000);
  CHECK(s.overflow == overflow_policy::reject);
  CHECK(s.lane_batch == 1000000);
  CHECK(s.ingress_batch == 1);
}

TEST_CASE("every scheduler, log and handler key is read", "[config]") {
  auto s = parsed(R"([scheduler]
policy = "stealing"
threads = 1024
max_throughput = 7
shards = 5
move_idle_lanes = false

[log]
level = "debug"

[handler]
name = "ledger"

[handler.ledger]
db_min_ms = 1
ratio = 0.5
audit = true
table = "accounts"
)");
  CHECK(s.scheduler == scheduler_policy::stealing);
  CHECK(s.threads == 1024);
  CHECK(s.max_throughput == 7);
  CHECK(s.shards == 5);
  CHECK_FALSE(s.move_idle_lanes);
  CHECK(s.log == log_level::debug);
  CHECK(s.handler == "ledger");
  std::map<std::string, param_value> want{{"db_min_ms", int64_t{1}},
                                          {"ratio", 0.5},
                                          {"audit", true},
                                          {"table", std::string{"accounts"}}};
  CHECK(s.params.values() == want);
  CHECK(parsed("scheduler.threads = 0").threads == 0);
}

TEST_CASE("every retry key is read, and bad retry values are named",
          "[config][retry]") {
  auto s = parsed(R"([retry]
max_attempts = 5
initial_backoff_ms = 20
multiplier = 1.5
max_backoff_ms = 400
jitter = "full"
attempt_timeout_ms = 250
)");
  CHECK(s.max_attempts == 5);
  CHECK(s.initial_backoff_ms == 20);
  CHECK(s.backoff_multiplier == 1.5);
  CHECK(s.max_backoff_ms == 400);
  CHECK(s.jitter == jitter_mode::full);
  CHECK(s.attempt_timeout_ms == 250);
  CHECK(parsed("retry.multiplier = 3").backoff_multiplier == 3.0);
  check_all({
    {"[retry]\nmax_attempts = 0\n",
     "t.toml:2: retry.max_attempts = 0: must be between 1 and 1000000"},
    {"[retry]\nmultiplier = 0.5\n",
     "t.toml:2: retry.multiplier = 0.5: must be a number between 1.0 and "
     "1000.0"},
    {"[retry]\njitter = \"half\"\n",
     "t.toml:2: retry.jitter = \"half\": must be one of \"none\", \"full\""},
  });
}

TEST_CASE("park keys are read, and sqlite without a path is named",
          "[config][park]") {
  CHECK(parsed("").park == park_mode::memory);
  auto s = parsed("[park]\nstore = \"sqlite\"\npath = \"/tmp/p.db\"\n");
  CHECK(s.park == park_mode::sqlite);
  CHECK(s.park_path == "/tmp/p.db");
  CHECK(parsed("park.store = \"none\"").park == park_mode::none);
  check_all({
    {"[park]\nstore = \"sqlite\"\n",
     "t.toml:2: park.store = \"sqlite\": needs park.path, the SQLite file to "
     "park events in"},
    {"[park]\nstore = \"disk\"\n",
     "t.toml:2: park.store = \"disk\": must be one of \"memory\", "
     "\"sqlite\", \"none\""},
    {"[park]\npath = 3\n", "t.toml:2: park.path = 3: must be a string"},
  });
}

TEST_CASE("state keys are read, and rocksdb without a path is named",
          "[config][state]") {
  auto d = parsed("");
  CHECK(d.state_store == state_backend::none);
  CHECK(d.state_checkpoint_ms == 100);
  CHECK(d.state_sync_mode == state_sync::checkpoint);
  CHECK(d.state_rollback);
  CHECK(d.state_recover == state_recovery::strict);
  auto s = parsed("[state]\nstore = \"rocksdb\"\npath = \"/var/st\"\n"
                  "checkpoint_ms = 20\ncheckpoint_events = 5\n"
                  "sync = \"every_event\"\nrollback = false\n"
                  "recover = \"point_in_time\"\n");
  CHECK(s.state_store == state_backend::rocksdb);
  CHECK(s.state_path == "/var/st");
  CHECK(s.state_checkpoint_ms == 20);
  CHECK(s.state_checkpoint_events == 5);
  CHECK(s.state_sync_mode == state_sync::every_event);
  CHECK_FALSE(s.state_rollback);
  CHECK(s.state_recover == state_recovery::point_in_time);
  CHECK(parsed(to_toml(s)).state_recover == state_recovery::point_in_time);
  check_all({
    {"[state]\nstore = \"rocksdb\"\n",
     "t.toml:2: state.store = \"rocksdb\": needs state.path, the directory "
     "of the RocksDB database to keep state in"},
    {"[state]\nstore = \"sqlite\"\n",
     "t.toml:2: state.store = \"sqlite\": must be one of \"none\", "
     "\"memory\", \"rocksdb\""},
    {"[state]\ncheckpoint_ms = 0\n",
     "t.toml:2: state.checkpoint_ms = 0: must be between 1 and 86400000"},
    {"[state]\nsync = \"always\"\n",
     "t.toml:2: state.sync = \"always\": must be one of \"checkpoint\", "
     "\"every_event\""},
    {"[state]\nrollback = 1\n",
     "t.toml:2: state.rollback = 1: must be true or false"},
    {"[state]\nrecover = \"skip\"\n",
     "t.toml:2: state.recover = \"skip\": must be one of \"strict\", "
     "\"point_in_time\""},
  });
}

TEST_CASE("metrics and stall keys are read, and a bad listen address is named",
          "[config][metrics]") {
  auto d = parsed("");
  CHECK(d.metrics_listen.empty());
  CHECK(d.metrics_latency);
  CHECK(d.stall_ms == 1000);
  auto s = parsed("[metrics]\nlisten = \"127.0.0.1:9464\"\nlatency = false\n"
                  "[log]\nstall_ms = 0\n");
  CHECK(s.metrics_listen == "127.0.0.1:9464");
  CHECK_FALSE(s.metrics_latency);
  CHECK(s.stall_ms == 0);
  CHECK(parsed("metrics.listen = \"[::1]:80\"").metrics_listen == "[::1]:80");
  auto bad = std::string{": must be \"host:port\" with a port from 1 to 65535, "
                         "e.g. \"127.0.0.1:9464\" (or \"\" for no endpoint)"};
  check_all({
    {"[metrics]\nlisten = \"9464\"\n",
     "t.toml:2: metrics.listen = \"9464\"" + bad},
    {"[metrics]\nlisten = \"localhost:0\"\n",
     "t.toml:2: metrics.listen = \"localhost:0\"" + bad},
    {"[metrics]\nlisten = \"localhost:65536\"\n",
     "t.toml:2: metrics.listen = \"localhost:65536\"" + bad},
    {"[metrics]\nlisten = \":80\"\n", "t.toml:2: metrics.listen = \":80\"" + bad},
    {"[metrics]\nlatency = 1\n",
     "t.toml:2: metrics.latency = 1: must be true or false"},
    {"[log]\nstall_ms = -1\n",
     "t.toml:2: log.stall_ms = -1: must be between 0 and 86400000"},
  });
}

TEST_CASE("metrics.threads is read, defaults to 16, and 0 or an absurd "
          "count is refused, naming the key",
          "[config][metrics]") {
  CHECK(parsed("").metrics_threads == 16);
  CHECK(parsed("[metrics]\nthreads = 4\n").metrics_threads == 4);
  CHECK(parsed("metrics.threads = 1024").metrics_threads == 1024);
  check_all({
    {"[metrics]\nthreads = 0\n",
     "t.toml:2: metrics.threads = 0: must be between 1 and 1024"},
    {"[metrics]\nthreads = 100000\n",
     "t.toml:2: metrics.threads = 100000: must be between 1 and 1024"},
    {"[metrics]\nthreads = \"many\"\n",
     "t.toml:2: metrics.threads = \"many\": must be an integer between 1 "
     "and 1024"},
  });
}

TEST_CASE("window accepts \"auto\" with window_max, and spill is checked "
          "against order and auto",
          "[config][window][spill]") {
  auto s = parsed("[runtime]\nwindow = \"auto\"\nwindow_max = 256\n");
  CHECK(s.window_auto);
  CHECK(s.window_max == 256);
  CHECK(to_toml(s).find("window = \"auto\"") != std::string::npos);
  CHECK(parsed(to_toml(s)).window_auto);
  CHECK_FALSE(parsed("runtime.window = 8").window_auto);
  auto sp = parsed("[runtime]\norder = \"global\"\n"
                   "[sink]\nspill_path = \"/tmp/x\"\nspill_max_bytes = 4096\n");
  CHECK(sp.spill_path == "/tmp/x");
  CHECK(sp.spill_max_bytes == 4096);
  check_all({
    {"[runtime]\nwindow = \"automatic\"\n",
     R"(t.toml:2: runtime.window = "automatic": must be an integer >= 1 (or "unbounded" or "auto"))"},
    {"[runtime]\nwindow_max = \"unbounded\"\n",
     R"(t.toml:2: runtime.window_max = "unbounded": must be an integer >= 1)"},
    {"[runtime]\norder = \"none\"\n[sink]\nspill_path = \"/tmp/x\"\n",
     R"(t.toml:4: sink.spill_path = "/tmp/x": needs runtime.order = "global" (the other orders hold no results back))"},
    {"[runtime]\norder = \"global\"\nwindow = \"auto\"\n[sink]\nspill_path = \"/tmp/x\"\n",
     R"(t.toml:5: sink.spill_path = "/tmp/x": and runtime.window = "auto" are alternatives: spill keeps the window fixed in memory and admits beyond it)"},
    {"[sink]\nspill_max_bytes = 0\n",
     R"(t.toml:2: sink.spill_max_bytes = 0: must be >= 1 (or "unbounded"))"},
  });
}

TEST_CASE("window and key_backlog accept \"unbounded\"", "[config]") {
  auto s = parsed("runtime.window = \"unbounded\"\n"
                  "runtime.key_backlog = \"unbounded\"\n");
  CHECK(s.window == unbounded);
  CHECK(s.key_backlog == unbounded);
}

TEST_CASE("every enum value is spelled as in the config file", "[config]") {
  for (auto x : {order_mode::global, order_mode::per_key, order_mode::none})
    CHECK(parsed("runtime.order = \"" + std::string{to_string(x)} + "\"").order
          == x);
  for (auto x : {overflow_policy::reject, overflow_policy::block})
    CHECK(parsed("runtime.overflow = \"" + std::string{to_string(x)} + "\"")
            .overflow
          == x);
  for (auto x : {scheduler_policy::sharing, scheduler_policy::stealing})
    CHECK(parsed("scheduler.policy = \"" + std::string{to_string(x)} + "\"")
            .scheduler
          == x);
  for (auto x : {log_level::error, log_level::warning, log_level::info,
                 log_level::debug})
    CHECK(parsed("log.level = \"" + std::string{to_string(x)} + "\"").log == x);
  CHECK(std::string{to_string(order_mode::per_key)} == "per_key");
  CHECK(std::string{to_string(overflow_policy::block)} == "block");
  CHECK(std::string{to_string(scheduler_policy::stealing)} == "stealing");
  CHECK(std::string{to_string(log_level::warning)} == "warning");
}

// -- invalid files ------------------------------------------------------------

TEST_CASE("a value out of range names file, line, key and the allowed range",
          "[config][errors]") {
  check_all({
    {"# ledger\n[runtime]\nwindow = -4\n",
     R"(t.toml:3: runtime.window = -4: must be >= 1 (or "unbounded" or "auto"))"},
    {"[runtime]\nmax_active_keys = 0",
     "t.toml:2: runtime.max_active_keys = 0: must be >= 1"},
    {"[runtime]\nkey_backlog = 0",
     R"(t.toml:2: runtime.key_backlog = 0: must be >= 1 (or "unbounded"))"},
    {"[runtime]\nlane_batch = 1000001",
     "t.toml:2: runtime.lane_batch = 1000001: must be between 1 and 1000000"},
    {"[runtime]\ningress_batch = 0",
     "t.toml:2: runtime.ingress_batch = 0: must be between 1 and 1000000"},
    {"[scheduler]\nthreads = 1025",
     "t.toml:2: scheduler.threads = 1025: must be between 0 and 1024"},
    {"[scheduler]\nthreads = -1",
     "t.toml:2: scheduler.threads = -1: must be between 0 and 1024"},
    {"[scheduler]\nmax_throughput = 0",
     "t.toml:2: scheduler.max_throughput = 0: must be >= 1"},
  });
}

TEST_CASE("a value of the wrong type names the expected type",
          "[config][errors]") {
  check_all({
    {"[runtime]\nwindow = \"64\"",
     R"(t.toml:2: runtime.window = "64": must be an integer >= 1 (or "unbounded" or "auto"))"},
    {"[runtime]\nlane_batch = 64.0",
     "t.toml:2: runtime.lane_batch = 64.0: must be an integer between 1 and "
     "1000000"},
    {"[runtime]\nmax_active_keys = \"unbounded\"",
     R"(t.toml:2: runtime.max_active_keys = "unbounded": must be an integer >= 1)"},
    {"[runtime]\norder = \"globl\"",
     R"(t.toml:2: runtime.order = "globl": must be one of "global", "per_key", "none")"},
    {"[runtime]\noverflow = true",
     R"(t.toml:2: runtime.overflow = true: must be one of "block", "reject")"},
    {"[scheduler]\npolicy = 1",
     R"(t.toml:2: scheduler.policy = 1: must be one of "sharing", "stealing")"},
    {"[log]\nlevel = \"WARNING\"",
     R"(t.toml:2: log.level = "WARNING": must be one of "error", "warning", "info", "debug")"},
    {"[handler]\nname = 5",
     "t.toml:2: handler.name = 5: must be a non-empty string naming a "
     "registered handler"},
    {"[handler]\nname = \"\"",
     "t.toml:2: handler.name = \"\": must be a non-empty string naming a "
     "registered handler"},
  });
}

TEST_CASE("an unknown key is rejected with the list of known keys",
          "[config][errors]") {
  check_all({
    {"[runtime]\nwindow = 4\nwindw = 5\n",
     "t.toml:3: unknown key runtime.windw (known keys: max_active_keys, "
     "window, window_max, order, key_backlog, overflow, lane_batch, ingress_batch, "
     "lane_linger_ms)"},
    {"[scheduler]\nthread = 5\n",
     "t.toml:2: unknown key scheduler.thread (known keys: policy, threads, "
     "max_throughput, shards, move_idle_lanes)"},
    {"[log]\nlevel = \"info\"\nfile = \"x\"\n",
     "t.toml:3: unknown key log.file (known keys: level, stall_ms)"},
    {"[runtime]\n\n[output]\nwindow = 4\n",
     "t.toml:3: unknown key output (known keys: runtime, sink, scheduler, retry, park, state, messaging, log, "
     "metrics, handler)"},
    {"[log]\n\"le vel\" = 1\n",
     "t.toml:2: unknown key log.\"le vel\" (known keys: level, stall_ms)"},
    {"verbose = true\n",
     "t.toml:1: unknown key verbose (known keys: runtime, sink, scheduler, retry, park, state, messaging, log, "
     "metrics, handler)"},
  });
}

TEST_CASE("a table or array where a scalar belongs is rejected",
          "[config][errors]") {
  check_all({
    {"[runtime]\norder = [\"global\"]",
     R"(t.toml:2: runtime.order = [...]: must be one of "global", "per_key", "none")"},
    {"[runtime.window]\nsize = 4",
     R"(t.toml:1: runtime.window = {...}: must be an integer >= 1 (or "unbounded" or "auto"))"},
    {"runtime = 5", "t.toml:1: runtime = 5: must be a table ([runtime])"},
    {"[log]\nlevel = { name = \"info\" }",
     R"(t.toml:2: log.level = {...}: must be one of "error", "warning", "info", "debug")"},
  });
}

TEST_CASE("only the handler table named by handler.name is allowed",
          "[config][errors]") {
  check_all({
    {"[handler]\nname = \"ledger\"\n\n[handler.ledgr]\nx = 1\n",
     "t.toml:4: unknown key handler.ledgr (only [handler.ledger], the table "
     "of handler.name, is allowed)"},
    {"[handler.ledger]\nx = 1\n",
     "t.toml:1: unknown key handler.ledger (set handler.name = \"ledger\" to "
     "configure this handler, or remove the table)"},
    {"[handler]\nname = \"ledger\"\nnmae = \"x\"\n",
     "t.toml:3: unknown key handler.nmae (known keys: name, and the table "
     "[handler.<name>])"},
    {"[handler]\nname = \"ledger\"\n[handler.ledger]\nids = [1, 2]\n",
     "t.toml:4: handler.ledger.ids = [...]: must be a bool, integer, float or "
     "string"},
    {"[handler]\nname = \"ledger\"\n[handler.ledger]\nsince = 1979-05-27\n",
     "t.toml:4: handler.ledger.since = 1979-05-27: must be a bool, integer, "
     "float or string"},
    {"[handler]\nname = \"ledger\"\nledger = 3\n",
     "t.toml:3: handler.ledger = 3: must be a table ([handler.ledger]) of the "
     "handler's keys"},
  });
}

TEST_CASE("malformed TOML reports line and column", "[config][errors]") {
  auto msg = error_of("[runtime]\nwindow = 64 64\n");
  CHECK_THAT(msg, Catch::StartsWith("invalid_config: t.toml:2:"));
  CHECK_THAT(msg, Catch::Contains(": parse error: "));
  msg = error_of("[runtime]\nwindow = 1\nwindow = 2\n");
  CHECK_THAT(msg, Catch::StartsWith("invalid_config: t.toml:3:"));
  CHECK_THAT(msg,
             Catch::Contains("parse error: ") && Catch::Contains("window"));
  // toml++ words the rest; only the position format is ours.
  CHECK_THAT(error_of("a = "),
             Catch::StartsWith("invalid_config: t.toml:1:5: parse error: "));
}

TEST_CASE("every problem of a file is reported, in file order",
          "[config][errors]") {
  // toml++ iterates tables by name, so [log] would come before [runtime].
  CHECK(error_of("[runtime]\nwindow = 0\n\n[log]\nlevel = \"loud\"\n")
        == "invalid_config: t.toml:2: runtime.window = 0: must be >= 1 (or "
           "\"unbounded\" or \"auto\")\n"
           "t.toml:5: log.level = \"loud\": must be one of \"error\", "
           "\"warning\", \"info\", \"debug\"");
}

// -- load ---------------------------------------------------------------------

TEST_CASE("load reads a file and records its path as origin",
          "[config][load]") {
  temp_dir dir;
  auto path = dir.write("ledger.toml", "[runtime]\nwindow = 12\n");
  auto res = load(path);
  REQUIRE(res);
  CHECK(res->window == 12);
  CHECK(res->origin == path);
}

TEST_CASE("load names the file in every error", "[config][load][errors]") {
  temp_dir dir;
  auto missing = (dir.path / "missing.toml").string();
  auto res = load(missing);
  REQUIRE(!res);
  CHECK(res.error().code() == static_cast<uint8_t>(errc::unreadable_config));
  CHECK(render(res.error())
        == "unreadable_config: " + missing
             + ": cannot read file: No such file or directory");
  res = load(dir.path.string());
  REQUIRE(!res);
  CHECK(render(res.error())
        == "unreadable_config: " + dir.path.string()
             + ": cannot read file: Is a directory");
  auto bad = dir.write("bad.toml", "[runtime]\nlane_batch = 0\n");
  res = load(bad);
  REQUIRE(!res);
  CHECK(res.error().code() == static_cast<uint8_t>(errc::invalid_config));
  CHECK(render(res.error())
        == "invalid_config: " + bad
             + ":2: runtime.lane_batch = 0: must be between 1 and 1000000");
}

// -- to_toml ------------------------------------------------------------------

TEST_CASE("to_toml renders settings that parse back to equal values",
          "[config][to_toml]") {
  SECTION("defaults") {
    settings s;
    require_equal(parsed(to_toml(s)), s);
  }
  SECTION("every key changed, awkward names and values") {
    settings s;
    s.max_active_keys = 3;
    s.window = unbounded;
    s.order = order_mode::none;
    s.key_backlog = unbounded;
    s.overflow = overflow_policy::reject;
    s.lane_batch = 1;
    s.ingress_batch = 1000000;
    s.lane_linger_ms = 0;
    s.scheduler = scheduler_policy::stealing;
    s.threads = 1024;
    s.max_throughput = 9223372036854775807u;
    s.shards = 1024;
    s.max_attempts = 7;
    s.initial_backoff_ms = 0;
    s.backoff_multiplier = 1.25;
    s.max_backoff_ms = 86400000;
    s.jitter = jitter_mode::full;
    s.attempt_timeout_ms = 1;
    s.park = park_mode::sqlite;
    s.park_path = "/var/lib/keylane/\"parked\".db";
    s.log = log_level::error;
    s.handler = "my ledger";
    s.params.set("int", int64_t{-9223372036854775807 - 1});
    s.params.set("third", 1.0 / 3.0);
    s.params.set("whole", 2.0);
    s.params.set("huge", 1e300);
    s.params.set("flag", false);
    s.params.set("text", std::string{"quote \" slash \\ tab\t nl\n \xc3\xa9"});
    s.params.set("dotted.key with space", std::string{});
    INFO(to_toml(s));
    require_equal(parsed(to_toml(s)), s);
  }
}

// -- handler_params -----------------------------------------------------------

TEST_CASE("handler params return the fallback only for absent keys",
          "[config][handler_params]") {
  handler_params p;
  p.set("n", int64_t{7});
  p.set("x", 1.5);
  p.set("b", true);
  p.set("s", std::string{"hi"});
  CHECK(p.contains("n"));
  CHECK(!p.contains("absent"));
  CHECK(p.get_int("n", 0) == 7);
  CHECK(p.get_double("x", 0) == 1.5);
  CHECK(p.get_double("n", 0) == 7.0); // integers convert
  CHECK(p.get_bool("b", false));
  CHECK(p.get_string("s", "fallback") == "hi");
  CHECK(p.get_int("absent", 42) == 42);
  CHECK(p.get_double("absent", 0.25) == 0.25);
  CHECK(p.get_bool("absent", true));
  CHECK(p.get_string("absent", "fallback") == "fallback");
  CHECK(p.problems("h").empty());
}

TEST_CASE("a handler param of the wrong type is a problem at its location",
          "[config][handler_params]") {
  handler_params p;
  p.set("db_min_ms", std::string{"fast"}, {"ledger.toml", 7});
  p.set("verbose", int64_t{1});
  CHECK(p.get_int("db_min_ms", 5) == 5);
  CHECK(p.get_int("db_min_ms", 5) == 5); // reported once all the same
  CHECK(p.get_bool("verbose", false) == false);
  CHECK(p.problems("ledger")
        == std::vector<std::string>{
          "ledger.toml:7: handler.ledger.db_min_ms = \"fast\": must be an "
          "integer, not a string",
          "handler.ledger.verbose = 1: must be true or false, not an integer"});
}

TEST_CASE("handler keys never read are reported as unknown",
          "[config][handler_params]") {
  auto s = parsed("[handler]\nname = \"ledger\"\n\n[handler.ledger]\n"
                  "db_min_ms = 1\ndb_mn_ms = 2\n");
  CHECK(s.params.get_int("db_min_ms", 0) == 1);
  CHECK(s.params.problems("ledger")
        == std::vector<std::string>{
          "t.toml:6: unknown key handler.ledger.db_mn_ms (handler \"ledger\" "
          "does not read it; check the spelling or remove it)"});
  CHECK(s.params.get_int("db_mn_ms", 0) == 2);
  CHECK(s.params.problems("ledger").empty());
}

TEST_CASE("reject records a problem and counts as reading the key",
          "[config][handler_params]") {
  handler_params p;
  p.set("pool", int64_t{-2}, {"ledger.toml", 3});
  p.reject("pool", "must be >= 1");
  p.reject("dsn", "is required");
  CHECK(p.problems("ledger")
        == std::vector<std::string>{
          "ledger.toml:3: handler.ledger.pool = -2: must be >= 1",
          "handler.ledger.dsn: is required"});
}

// -- command-line overrides ---------------------------------------------------

namespace {

/// Applies `assignments` to `s`; returns the rendered error or "no error".
std::string override_error(settings& s,
                           const std::vector<std::string>& assignments) {
  auto err = apply_overrides(s, assignments);
  return err ? render(err) : std::string{"no error"};
}

/// A bad override list and the complete message it must produce.
struct bad_override {
  std::vector<std::string> assignments;
  std::string message;
};

/// Checks each case against `base`, and that a failed case changed nothing.
void check_overrides(const settings& base,
                     const std::vector<bad_override>& cases) {
  for (const auto& c : cases) {
    INFO("--set " << (c.assignments.empty() ? "" : c.assignments.front()));
    auto s = base;
    auto err = apply_overrides(s, c.assignments);
    REQUIRE(err);
    CHECK(err.code() == static_cast<uint8_t>(errc::invalid_config));
    CHECK(render(err) == "invalid_config: " + c.message);
    require_equal(s, base);
    CHECK(s.origin == base.origin);
  }
}

/// "(write section.key=value, ...)", the advice of a malformed override.
const std::string how_to_set
  = " (write section.key=value, for example runtime.window=4096; known keys: "
    "runtime, sink, scheduler, retry, park, state, messaging, log, metrics, handler)";

} // namespace

TEST_CASE("an override sets a count, unbounded, an enum, a real or a string",
          "[config][override]") {
  settings s;
  REQUIRE(!apply_override(s, "runtime.window=4096"));
  CHECK(s.window == 4096);
  REQUIRE(!apply_override(s, "runtime.key_backlog=\"unbounded\""));
  CHECK(s.key_backlog == unbounded);
  REQUIRE(!apply_override(s, "runtime.window=unbounded"));
  CHECK(s.window == unbounded);
  REQUIRE(!apply_override(s, "runtime.order=per_key"));
  CHECK(s.order == order_mode::per_key);
  REQUIRE(!apply_override(s, "runtime.order=\"none\""));
  CHECK(s.order == order_mode::none);
  REQUIRE(!apply_override(s, "scheduler.policy='stealing'"));
  CHECK(s.scheduler == scheduler_policy::stealing);
  REQUIRE(!apply_override(s, "retry.multiplier=1.5"));
  CHECK(s.backoff_multiplier == 1.5);
  REQUIRE(!apply_override(s, "retry.multiplier=3"));
  CHECK(s.backoff_multiplier == 3.0);
  REQUIRE(!apply_override(s, "park.path=/tmp/x.db"));
  CHECK(s.park_path == "/tmp/x.db");
  REQUIRE(!apply_override(s, "park.path=\"2024\"")); // quoted: not a number
  CHECK(s.park_path == "2024");
  REQUIRE(!apply_override(s, " log.level = debug "));
  CHECK(s.log == log_level::debug);
  REQUIRE(!apply_override(s, "scheduler.threads=0"));
  CHECK(s.threads == 0);
}

TEST_CASE("overrides record themselves in origin, once", "[config][override]") {
  auto s = parsed("runtime.window = 8\n");
  REQUIRE(!apply_overrides(s, {}));
  CHECK(s.origin == "t.toml");
  REQUIRE(!apply_override(s, "runtime.window=9"));
  CHECK(s.origin == "t.toml + --set");
  REQUIRE(!apply_overrides(s, {"runtime.window=10", "log.level=info"}));
  CHECK(s.origin == "t.toml + --set");
  settings d;
  REQUIRE(!apply_override(d, "runtime.window=9"));
  CHECK(d.origin == "<defaults> + --set");
  CHECK_THAT(to_toml(d), Catch::StartsWith(
                           "# keylane settings from \"<defaults> + --set\"\n"));
}

TEST_CASE("an override sets the handler name and the named handler's params",
          "[config][override][handler_params]") {
  auto s = parsed("[handler]\nname = \"ledger\"\n\n[handler.ledger]\n"
                  "db_min_ms = 1\n");
  REQUIRE(!apply_overrides(s, {"handler.ledger.db_timeout_ms=100",
                               "handler.ledger.db_min_ms=2",
                               "handler.ledger.ratio=0.5",
                               "handler.ledger.audit=true",
                               "handler.ledger.table=accounts"}));
  std::map<std::string, param_value> want{{"db_min_ms", int64_t{2}},
                                          {"db_timeout_ms", int64_t{100}},
                                          {"ratio", 0.5},
                                          {"audit", true},
                                          {"table", std::string{"accounts"}}};
  CHECK(s.params.values() == want);
  SECTION("a param the handler does not read is named by its override") {
    for (auto& key : {"db_min_ms", "db_timeout_ms", "ratio", "audit"})
      (void) s.params.get_string(key, ""); // only "table" reads well
    auto problems = s.params.problems("ledger");
    REQUIRE(problems.size() == 5);
    CHECK(problems[0]
          == "--set handler.ledger.db_min_ms=2: handler.ledger.db_min_ms = 2: "
             "must be a string, not an integer");
    CHECK(problems[4]
          == "--set handler.ledger.table=accounts: unknown key "
             "handler.ledger.table (handler \"ledger\" does not read it; "
             "check the spelling or remove it)");
  }
  SECTION("naming the same handler keeps its params") {
    REQUIRE(!apply_override(s, "handler.name=ledger"));
    CHECK(s.params.values() == want);
  }
  SECTION("naming another handler drops the previous handler's params") {
    REQUIRE(!apply_overrides(s, {"handler.name=fast_ledger",
                                 "handler.fast_ledger.batch=8"}));
    CHECK(s.handler == "fast_ledger");
    CHECK(s.params.values()
          == std::map<std::string, param_value>{{"batch", int64_t{8}}});
  }
  SECTION("a handler can be named and configured from defaults") {
    settings d;
    REQUIRE(!apply_overrides(d, {"handler.name=ledger",
                                 "handler.ledger.db_min_ms=3"}));
    CHECK(d.handler == "ledger");
    CHECK(d.params.values()
          == std::map<std::string, param_value>{{"db_min_ms", int64_t{3}}});
  }
}

TEST_CASE("a bad override value names the override and what is allowed",
          "[config][override][errors]") {
  check_overrides(settings{}, {
    {{"runtime.window=-4"},
     R"(--set runtime.window=-4: must be >= 1 (or "unbounded" or "auto"))"},
    {{"runtime.window=lots"},
     R"(--set runtime.window=lots: must be an integer >= 1 (or "unbounded" or "auto"))"},
    {{"runtime.max_active_keys=unbounded"},
     "--set runtime.max_active_keys=unbounded: must be an integer >= 1"},
    {{"runtime.lane_batch=64.0"},
     "--set runtime.lane_batch=64.0: must be an integer between 1 and "
     "1000000"},
    {{"runtime.order=globl"},
     R"(--set runtime.order=globl: must be one of "global", "per_key", "none")"},
    {{"runtime.order="},
     R"(--set runtime.order=: must be one of "global", "per_key", "none")"},
    {{"retry.multiplier=0.5"},
     "--set retry.multiplier=0.5: must be a number between 1.0 and 1000.0"},
    {{"park.path=2024"}, "--set park.path=2024: must be a string"},
    {{"handler.name="},
     "--set handler.name=: must be a non-empty string naming a registered "
     "handler"},
    // An inline table reaches inner keys, which are then named in full.
    {{"runtime={window=0, order=\"none\"}"},
     R"(--set runtime={window=0, order="none"}: runtime.window = 0: must be >= 1 (or "unbounded" or "auto"))"},
  });
}

TEST_CASE("an unknown, empty or malformed override key lists the known keys",
          "[config][override][errors]") {
  check_overrides(settings{}, {
    {{"runtime.windw=5"},
     "--set runtime.windw=5: unknown key runtime.windw (known keys: "
     "max_active_keys, window, window_max, order, key_backlog, overflow, "
     "lane_batch, "
     "ingress_batch, lane_linger_ms)"},
    {{"output.window=4"},
     "--set output.window=4: unknown key output (known keys: runtime, sink, "
     "scheduler, retry, park, state, messaging, log, metrics, handler)"},
    {{"runtime=5"},
     "--set runtime=5: runtime is a table; name one of its keys (known keys: "
     "max_active_keys, window, window_max, order, key_backlog, overflow, "
     "lane_batch, "
     "ingress_batch, lane_linger_ms)"},
    {{"handler=ledger"},
     "--set handler=ledger: handler is a table; name one of its keys (known "
     "keys: name, and the table [handler.<name>])"},
    {{"handler.nmae=x"},
     "--set handler.nmae=x: unknown key handler.nmae (known keys: name, and "
     "the table [handler.<name>])"},
    {{"runtime.window"}, "--set runtime.window: missing \"=\"" + how_to_set},
    {{""}, "--set : missing \"=\"" + how_to_set},
    {{"=5"}, "--set =5: missing the key before \"=\"" + how_to_set},
    {{" =5"}, "--set  =5: missing the key before \"=\"" + how_to_set},
    {{"run time.window=5"},
     "--set run time.window=5: \"run time.window\" is not a key" + how_to_set},
    {{"runtime.window#=5"},
     "--set runtime.window#=5: \"runtime.window#\" is not a key" + how_to_set},
  });
}

TEST_CASE("a handler param override follows the file's handler rules",
          "[config][override][errors]") {
  check_overrides(settings{}, {
    {{"handler.ledger.x=1"},
     "--set handler.ledger.x=1: unknown key handler.ledger (set handler.name "
     "= \"ledger\" to configure this handler, or remove the table)"},
  });
  auto s = parsed("handler.name = \"ledger\"\n");
  check_overrides(s, {
    {{"handler.ledgr.x=1"},
     "--set handler.ledgr.x=1: unknown key handler.ledgr (only "
     "[handler.ledger], the table of handler.name, is allowed)"},
    {{"handler.ledger=3"},
     "--set handler.ledger=3: must be a table ([handler.ledger]) of the "
     "handler's keys"},
    {{"handler.ledger.ids=[1, 2]"},
     "--set handler.ledger.ids=[1, 2]: must be a bool, integer, float or "
     "string"},
  });
}

TEST_CASE("park.store = sqlite needs park.path after overrides as well",
          "[config][override][park]") {
  check_overrides(settings{}, {
    {{"park.store=sqlite"},
     "--set park.store=sqlite: needs park.path, the SQLite file to park "
     "events in"},
    {{"park={store=\"sqlite\"}"},
     "--set park={store=\"sqlite\"}: needs park.path, the SQLite file to "
     "park events in"},
  });
  for (auto order : {std::vector<std::string>{"park.store=sqlite",
                                              "park.path=/tmp/p.db"},
                     std::vector<std::string>{"park.path=/tmp/p.db",
                                              "park.store=sqlite"}}) {
    settings s;
    REQUIRE(!apply_overrides(s, order));
    CHECK(s.park == park_mode::sqlite);
    CHECK(s.park_path == "/tmp/p.db");
  }
  auto file = parsed("[park]\nstore = \"sqlite\"\npath = \"/tmp/p.db\"\n");
  check_overrides(file, {
    {{"runtime.window=5", "park.path=", "log.level=info"},
     "--set park.path=: needs park.path, the SQLite file to park events in"},
  });
  // Settings filled in code that break the rule already are named as such.
  settings code;
  code.park = park_mode::sqlite;
  check_overrides(code, {
    {{"runtime.window=5"},
     "<defaults>: park.store: needs park.path, the SQLite file to park events "
     "in"},
  });
}

TEST_CASE("several overrides apply in order, or none with every problem named",
          "[config][override]") {
  settings s;
  REQUIRE(!apply_overrides(s, {"runtime.window=8", "runtime.window=16"}));
  CHECK(s.window == 16);
  check_overrides(s, {
    {{"runtime.window=32", "runtime.window=0", "runtime.order=ok",
      "log.level=debug", "nonsense"},
     "--set runtime.window=0: must be >= 1 (or \"unbounded\" or \"auto\")\n"
     "--set runtime.order=ok: must be one of \"global\", \"per_key\", "
     "\"none\"\n"
     "--set nonsense: missing \"=\"" + how_to_set},
  });
  CHECK(s.window == 16);
  CHECK(s.log == settings{}.log); // unchanged: log.level=debug was not applied
}

TEST_CASE("an override value cannot smuggle in a second key",
          "[config][override][errors]") {
  settings s;
  // Several lines are no TOML value, so they are one (bad) string.
  auto err = apply_override(s, "runtime.window=1\nruntime.order=\"none\"");
  REQUIRE(err);
  CHECK_THAT(render(err),
             Catch::EndsWith(": must be an integer >= 1 (or \"unbounded\" or \"auto\")"));
  CHECK(s.order == settings{}.order); // unchanged
  REQUIRE(!apply_override(s, "park.path=/a\nb"));
  CHECK(s.park_path == "/a\nb");
  REQUIRE(!apply_override(s, "runtime.window=64 # a comment"));
  CHECK(s.window == 64);
  CHECK(override_error(s, {"runtime.window=1, log.level=\"debug\""})
        == "invalid_config: --set runtime.window=1, log.level=\"debug\": "
           "must be an integer >= 1 (or \"unbounded\" or \"auto\")");
}

TEST_CASE("overrides yield the settings of a file with the same values",
          "[config][override]") {
  const std::string base = R"([runtime]
window = 8
order = "global"

[park]
store = "memory"

[handler]
name = "ledger"

[handler.ledger]
db_min_ms = 1
)";
  auto s = parsed(base);
  REQUIRE(!apply_overrides(s, {
    "runtime.max_active_keys=3", "runtime.window=unbounded",
    "runtime.order=per_key", "runtime.key_backlog=100",
    "runtime.overflow=reject", "runtime.lane_batch=2",
    "runtime.ingress_batch=3", "scheduler.policy=stealing",
    "scheduler.threads=4", "scheduler.max_throughput=5",
    "retry.max_attempts=6", "retry.initial_backoff_ms=7",
    "retry.multiplier=1.25", "retry.max_backoff_ms=800", "retry.jitter=full",
    "retry.attempt_timeout_ms=9", "park.store=sqlite",
    "park.path=/var/lib/keylane/park.db", "log.level=error",
    "handler.ledger.db_min_ms=2", "handler.ledger.audit=true"}));
  auto want = parsed(R"([runtime]
max_active_keys = 3
window = "unbounded"
order = "per_key"
key_backlog = 100
overflow = "reject"
lane_batch = 2
ingress_batch = 3

[scheduler]
policy = "stealing"
threads = 4
max_throughput = 5

[retry]
max_attempts = 6
initial_backoff_ms = 7
multiplier = 1.25
max_backoff_ms = 800
jitter = "full"
attempt_timeout_ms = 9

[park]
store = "sqlite"
path = "/var/lib/keylane/park.db"

[log]
level = "error"

[handler]
name = "ledger"

[handler.ledger]
db_min_ms = 2
audit = true
)");
  require_equal(s, want);
  CHECK(s.origin == "t.toml + --set");
  // And to_toml writes what a file would hold.
  require_equal(parsed(to_toml(s)), want);
}

// -- docs/config.md -----------------------------------------------------------

#ifdef KEYLANE_CONFIG_DOC
TEST_CASE("docs/config.md documents every key with its default",
          "[config][docs]") {
  // Every key of the schema, with its default as to_toml spells it.
  std::map<std::string, std::string> defaults{
    {"handler.name", "\"" + settings{}.handler + "\""}};
  std::istringstream toml{to_toml(settings{})};
  std::string line, table;
  while (std::getline(toml, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    if (line[0] == '[') {
      table = line.substr(1, line.size() - 2);
      continue;
    }
    auto eq = line.find(" = ");
    REQUIRE(eq != std::string::npos);
    defaults[table + '.' + line.substr(0, eq)] = line.substr(eq + 3);
  }
  REQUIRE(defaults.size() > 10); // the parse above found the keys
  // The doc's reference rows: "| `section.key` | type | `default` | ... |".
  std::ifstream doc{KEYLANE_CONFIG_DOC};
  REQUIRE(doc);
  auto unquote = [](std::string cell) {
    auto first = cell.find_first_not_of(' ');
    auto last = cell.find_last_not_of(' ');
    cell = first == std::string::npos ? "" : cell.substr(first, last - first + 1);
    if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`')
      cell = cell.substr(1, cell.size() - 2);
    return cell;
  };
  std::map<std::string, std::string> documented;
  bool handler_table = false;
  while (std::getline(doc, line)) {
    if (line.rfind("| `", 0) != 0)
      continue;
    std::vector<std::string> cells;
    std::istringstream row{line.substr(1)};
    for (std::string cell; std::getline(row, cell, '|');)
      cells.push_back(unquote(cell));
    REQUIRE(cells.size() == 5); // key, type, default, allowed, reloads
    INFO(line);
    CHECK((cells[4] == "yes" || cells[4] == "restart"));
    if (cells[0].find('<') != std::string::npos) {
      CHECK(cells[4] == "restart");
      handler_table = handler_table || cells[0] == "handler.<name>.<key>";
      continue;
    }
    CHECK(defaults.count(cells[0]) == 1); // no row for a key that is gone
    CHECK((cells[4] == "yes") == reloads_at_run_time(cells[0]));
    documented[cells[0]] = cells[2];
  }
  CHECK(handler_table);
  for (const auto& [key, value] : defaults) {
    INFO("docs/config.md, key " << key);
    CHECK(documented.count(key) == 1);
    if (documented.count(key) == 1)
      CHECK(documented[key] == value);
  }
}
#endif
