// SPDX-License-Identifier: Apache-2.0
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "../world.hpp"

namespace {

// An engine that keeps what was submitted, room by room, in order.
struct recording_engine final : game::rooms_engine {
  std::vector<std::pair<std::string, game::room_msg>> got;
  bool submit(const std::string& room, game::room_msg m) override {
    got.emplace_back(room, std::move(m));
    return true;
  }
  void stop() override {}
};

struct silent_client final : game::client {
  void send(std::shared_ptr<const std::string>) override {}
};

game::room_msg input(uint64_t player, uint64_t seq) {
  game::room_msg m;
  m.what = game::room_msg::kind::input;
  m.player = player;
  m.seq = seq;
  return m;
}

} // namespace

// A tell leaves when the sending tick ends, so what the player sends after
// the hand-over must not reach the next room before the transfer does.
TEST_CASE("a player in transit sends to no room until the next room has "
          "it, then its held inputs and leave follow the transfer in order",
          "[game_rooms][world]") {
  game::server_stats stats;
  game::world w{4, 4, stats};
  recording_engine eng;
  w.attach(&eng);
  std::string why;
  auto id = w.join(std::make_shared<silent_client>(), "room-0", "ann", why);
  REQUIRE(id != 0);
  eng.got.clear();

  game::player p;
  p.id = id;
  p.name = "ann";
  p.ack = 7;
  std::vector<game::room_msg> told;
  auto answer = w.move("room-0", "room-1", p, true, [&](game::room_msg m) {
    told.push_back(std::move(m));
    return true;
  });
  REQUIRE(answer == game::handover::accepted);
  REQUIRE(told.size() == 1);
  CHECK(told[0].what == game::room_msg::kind::transfer);
  CHECK(told[0].seq == 7);

  REQUIRE(w.forward(input(id, 8)));
  REQUIRE(w.forward(input(id, 9)));
  w.leave(id);
  CHECK(eng.got.empty()); // nothing went around the transfer
  CHECK_FALSE(w.present(id, "room-0"));
  CHECK(w.present(id, "room-1"));

  CHECK_FALSE(w.arrive(id, "room-2").here); // not on its way there
  auto a = w.arrive(id, "room-1");
  REQUIRE(a.here);
  REQUIRE(a.held.size() == 3);
  CHECK(a.held[0].seq == 8);
  CHECK(a.held[1].seq == 9);
  CHECK(a.held[2].what == game::room_msg::kind::leave);
  CHECK_FALSE(w.arrive(id, "room-1").here); // once

  REQUIRE(w.forward(input(id, 10))); // arrived: straight to its room now
  REQUIRE(eng.got.size() == 1);
  CHECK(eng.got[0].first == "room-1");
  CHECK(eng.got[0].second.seq == 10);
}

TEST_CASE("a player in transit may send at most max_held messages, and "
          "its leave is never refused",
          "[game_rooms][world]") {
  game::server_stats stats;
  game::world w{2, 2, stats};
  recording_engine eng;
  w.attach(&eng);
  std::string why;
  auto id = w.join(std::make_shared<silent_client>(), "room-0", "bob", why);
  REQUIRE(id != 0);
  game::player p;
  p.id = id;
  REQUIRE(w.move("room-0", "room-1", p, true,
                 [](game::room_msg) { return true; })
          == game::handover::accepted);
  for (uint64_t i = 0; i < game::world::max_held; ++i)
    REQUIRE(w.forward(input(id, i + 1)));
  CHECK_FALSE(w.forward(input(id, 1000)));
  CHECK(stats.busy == 1);
  w.leave(id);
  auto a = w.arrive(id, "room-1");
  REQUIRE(a.held.size() == game::world::max_held + 1);
  CHECK(a.held.back().what == game::room_msg::kind::leave);
}

TEST_CASE("a hand-over the next room's queue refuses leaves the player "
          "where it was, and a full room cap refuses it",
          "[game_rooms][world]") {
  game::server_stats stats;
  game::world w{3, 1, stats};
  recording_engine eng;
  w.attach(&eng);
  std::string why;
  auto id = w.join(std::make_shared<silent_client>(), "room-0", "cy", why);
  REQUIRE(id != 0);
  game::player p;
  p.id = id;
  // Cap 1: room-1 would be a second open room.
  CHECK(w.move("room-0", "room-1", p, true,
               [](game::room_msg) { return true; })
        == game::handover::refused);
  CHECK(w.present(id, "room-0"));
  game::world w2{3, 3, stats};
  w2.attach(&eng);
  auto id2 = w2.join(std::make_shared<silent_client>(), "room-0", "di", why);
  p.id = id2;
  CHECK(w2.move("room-0", "room-1", p, true,
                [](game::room_msg) { return false; })
        == game::handover::retry);
  CHECK(w2.present(id2, "room-0"));
  eng.got.clear();
  REQUIRE(w2.forward(input(id2, 1))); // not in transit: to its room at once
  REQUIRE(eng.got.size() == 1);
  CHECK(eng.got[0].first == "room-0");
}
