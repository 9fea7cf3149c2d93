// SPDX-License-Identifier: Apache-2.0
// Where the kit and a real runtime could disagree, one scenario runs
// through both and their outputs are compared key by key: completions,
// retries, parking and what parks behind, a tell against an outside submit
// of its target key, an ask to a key under test, and state across events.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <keylane/runtime.hpp>
#include <keylane/testing/kit.hpp>

#include "script_handler.hpp"

using kit_test::cmd;
using kit_test::script_handler;

namespace {

// What one event ended as, as the output shows it.
using ended_as = std::tuple<std::string, int64_t, keylane::outcome,
                            std::optional<int64_t>, uint32_t>;
using by_key = std::map<std::string, std::vector<ended_as>>;

keylane::handler_factory scripts() {
  return [](const keylane::handler_params&) {
    return std::make_unique<script_handler>();
  };
}

keylane::settings shared_settings() {
  keylane::settings cfg;
  cfg.max_attempts = 3;
  cfg.initial_backoff_ms = 1;
  cfg.max_backoff_ms = 2;
  cfg.lane_linger_ms = 60000; // no retire inside the scenario
  cfg.threads = 2;
  return cfg;
}

// The scenario, submitted in this order. "c" is submitted before "b",
// whose event tells "c": the tell comes after c's own event in both.
template <class Submit>
void scenario(Submit&& submit) {
  submit("a", cmd{"add", 10});
  submit("a", cmd{"fail_until", 2});
  submit("a", cmd{"add", 5});
  submit("a", cmd{"skip"});
  submit("c", cmd{"add", 1});
  submit("b", cmd{"tell", 3, "c"});
  submit("b", cmd{"ok", 1});
  submit("d", cmd{"fail"});
  submit("d", cmd{"ok", 2});
  submit("e", cmd{"ask", 5, "f"});
}

// The scenario through a runtime and through the kit, by key.
std::pair<by_key, by_key> both(const keylane::settings& cfg) {
  by_key real;
  {
    std::mutex m;
    auto rt = keylane::runtime<cmd, int64_t>::start(
      cfg, scripts(), [&](keylane::event<cmd, int64_t>& e) {
        std::lock_guard<std::mutex> guard{m};
        real[e.key().to_string()].emplace_back(
          e.payload.op, e.payload.value, e.status, e.result, e.attempts);
      });
    REQUIRE(rt);
    scenario([&](const char* k, cmd c) {
      REQUIRE((*rt)->submit(k, std::move(c)).ok());
    });
    REQUIRE((*rt)->drain(std::chrono::seconds(60)));
    (*rt)->stop();
  }

  by_key simulated;
  keylane::testing::kit<cmd, int64_t> kit{scripts(), cfg};
  scenario([&](const char* k, cmd c) { kit.submit(k, std::move(c)); });
  kit.advance(std::chrono::seconds(1));
  for (auto id : kit.ended())
    simulated[kit.key_of(id).to_string()].emplace_back(
      kit.payload(id).op, kit.payload(id).value, kit.status(id),
      kit.result(id), kit.attempts(id));
  return {real, simulated};
}

} // namespace

TEST_CASE("the kit and a runtime end one scenario's events alike, key by key",
          "[testing][runtime]") {
  auto [real, simulated] = both(shared_settings());
  REQUIRE(real.size() == 6);
  for (auto& [k, list] : real) {
    INFO("key " << k);
    CHECK(simulated[k] == list);
  }
  // And the scenario says what it means to: a retry, a park behind, the
  // tell after the outside submit, the ask's answer.
  CHECK(std::get<4>(real["a"][1]) == 2);
  CHECK(std::get<2>(real["d"][1]) == keylane::outcome::parked);
  CHECK(std::get<3>(real["c"][1]) == 4);
  CHECK(std::get<3>(real["e"][0]) == 5);
}

TEST_CASE("with a state store the kit and a runtime keep, send and apply a "
          "stateful key's tells alike",
          "[testing][runtime][state]") {
  auto cfg = shared_settings();
  cfg.state_store = keylane::state_backend::memory; // tells kept, sent
  cfg.state_checkpoint_ms = 5;                      // after b's write
  auto [real, simulated] = both(cfg);
  REQUIRE(real.size() == 6);
  for (auto& [k, list] : real) {
    INFO("key " << k);
    CHECK(simulated[k] == list);
  }
  CHECK(std::get<3>(real["c"][1]) == 4);
}
