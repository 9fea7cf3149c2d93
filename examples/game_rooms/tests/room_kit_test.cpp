// SPDX-License-Identifier: Apache-2.0
// A room's handler under keylane::testing: its ticks on the kit's clock and
// a player's walk through the portal to the next room, in one thread.
#include <chrono>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include <keylane/testing/kit.hpp>

#include "../room_handler.hpp"
#include "../room_map.hpp"

using namespace std::chrono_literals;
using room_kit = keylane::testing::kit<game::room_msg, uint8_t>;

namespace {

struct counting_client final : game::client {
  size_t got = 0;
  void send(std::shared_ptr<const std::string>) override { ++got; }
};

// Four rooms on the kit: the world submits to it as it does to lanes.
struct rooms final : game::rooms_engine {
  game::server_stats stats;
  game::world w{4, 4, stats};
  room_kit kit{[this](const keylane::handler_params&) {
    return std::make_unique<game::room_handler>(w, stats, 0, 50ms, 100);
  }};
  rooms() { w.attach(this); }
  bool submit(const std::string& room, game::room_msg m) override {
    kit.submit(room, std::move(m));
    return true;
  }
  void stop() override {}
  size_t ticks(const char* room) {
    size_t n = 0;
    for (auto id : kit.ended())
      n += kit.key_of(id) == keylane::key{room}
           && kit.payload(id).what == game::room_msg::kind::tick;
    return n;
  }
};

} // namespace

TEST_CASE("a room with a player ticks 20 times a second on the test's "
          "clock, holds its lane, and retires once the player left",
          "[game_rooms][kit]") {
  rooms r;
  auto ann = std::make_shared<counting_client>();
  std::string why;
  auto id = r.w.join(ann, "room-0", "ann", why);
  REQUIRE(id != 0);
  r.kit.advance(1s);
  CHECK(r.ticks("room-0") == 20);
  CHECK(ann->got >= 20); // a snapshot per tick
  CHECK(r.kit.held("room-0"));
  CHECK(r.kit.turn_budget("room-0") == size_t{100});
  r.w.leave(id);
  r.kit.advance(1s);
  CHECK(r.ticks("room-0") == 21); // the pending one finds no one
  CHECK_FALSE(r.kit.active("room-0"));
}

TEST_CASE("a player stepping onto the portal is told to the next room, "
          "which takes it",
          "[game_rooms][kit]") {
  rooms r;
  std::string why;
  auto id = r.w.join(std::make_shared<counting_client>(), "room-0", "bob", why);
  r.kit.run_until_idle();
  auto& here = r.kit.handler_of<game::room_handler>("room-0").state();
  REQUIRE(here.players.size() == 1);
  here.players[0].x = game::room_map::portal_x - 1; // one step short
  here.players[0].y = game::room_map::portal_y;
  here.players[0].dx = 1;
  r.kit.advance(50ms);
  CHECK(r.w.present(id, "room-1"));
  CHECK(here.players.empty());
  auto& there = r.kit.handler_of<game::room_handler>("room-1").state();
  REQUIRE(there.players.size() == 1);
  CHECK(there.players[0].name == "bob");
  size_t transfers = 0;
  for (auto& m : r.kit.sent())
    if (m.payload.what == game::room_msg::kind::transfer) {
      ++transfers;
      CHECK(m.from == keylane::key{"room-0"});
      CHECK(m.to == keylane::key{"room-1"});
      CHECK(m.kind == keylane::testing::message_kind::tell);
    }
  CHECK(transfers == 1);
}
