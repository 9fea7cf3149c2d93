// SPDX-License-Identifier: Apache-2.0
// The twin of docs/testing-handlers.md's example: a Catch2 test the build
// compiles and CTest runs.
#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

// doc:begin docs/testing-handlers.md
#include <keylane/stateful_handler.hpp>
#include <keylane/testing/kit.hpp>

struct order_msg { std::string what; int qty = 0; };

// A book whose DAY orders rest until the close, an 8-hour timer it sets
// when its first order comes; it holds its lane while orders rest.
struct day_book : keylane::stateful_handler<order_msg, int, int> {
  void on_event(order_msg& m, keylane::completion<int> done) override {
    if (m.what == "close") {
      state() = 0;
      release();
    } else if (state() == 0) {
      keylane::timer_id id = 0;
      (void) tell_after(std::chrono::hours(8), current_key(), {"close", 0}, id);
      hold();
    }
    state() += m.qty;
    done.ok(state());
  }
};

TEST_CASE("a DAY order rests until the close, then expires", "[book]") {
  keylane::testing::kit<order_msg, int> kit{[](const keylane::handler_params&) {
    return std::make_unique<day_book>();
  }};
  auto buy = kit.submit("AAPL", {"order", 100});
  kit.advance(std::chrono::hours(8) - std::chrono::milliseconds(1));
  CHECK(kit.result(buy) == 100);
  CHECK(kit.handler_of<day_book>("AAPL").state() == 100);
  kit.advance(std::chrono::milliseconds(1));          // the close
  CHECK(kit.handler_of<day_book>("AAPL").state() == 0);
  kit.advance(std::chrono::seconds(1));               // its linger passes
  CHECK_FALSE(kit.active("AAPL"));
}
// doc:end
