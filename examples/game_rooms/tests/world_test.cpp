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

// A world of `rooms` rooms, at most `max_open` open, with one player in
// room-0.
struct one_player {
  game::server_stats stats;
  game::world w;
  recording_engine eng;
  uint64_t id = 0;

  one_player(size_t rooms, size_t max_open, const char* name)
    : w{rooms, max_open, stats} {
    w.attach(&eng);
    std::string why;
    id = w.join(std::make_shared<silent_client>(), "room-0", name, why);
    REQUIRE(id != 0);
    eng.got.clear();
  }

  // Hands the player from room-0 to `to` as a room's tell does, the tell
  // answering `told`.
  game::handover tell_to(const std::string& to, bool told) {
    game::player p;
    p.id = id;
    return w.move("room-0", to, p, true,
                  [told](game::room_msg) { return told; });
  }
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
  one_player x{4, 4, "ann"};
  auto& w = x.w;
  auto id = x.id;
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
  CHECK(x.eng.got.empty()); // nothing went around the transfer
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
  REQUIRE(x.eng.got.size() == 1);
  CHECK(x.eng.got[0].first == "room-1");
  CHECK(x.eng.got[0].second.seq == 10);
}

TEST_CASE("a player in transit may send at most max_held messages, and "
          "its leave is never refused",
          "[game_rooms][world]") {
  one_player x{2, 2, "bob"};
  REQUIRE(x.tell_to("room-1", true) == game::handover::accepted);
  for (uint64_t i = 0; i < game::world::max_held; ++i)
    REQUIRE(x.w.forward(input(x.id, i + 1)));
  CHECK_FALSE(x.w.forward(input(x.id, 1000)));
  CHECK(x.stats.busy == 1);
  x.w.leave(x.id);
  auto a = x.w.arrive(x.id, "room-1");
  REQUIRE(a.held.size() == game::world::max_held + 1);
  CHECK(a.held.back().what == game::room_msg::kind::leave);
}

TEST_CASE("a hand-over the next room's queue refuses leaves the player "
          "where it was, and a full room cap refuses it",
          "[game_rooms][world]") {
  one_player capped{3, 1, "cy"}; // room-1 would be a second open room
  CHECK(capped.tell_to("room-1", true) == game::handover::refused);
  CHECK(capped.w.present(capped.id, "room-0"));
  one_player refused{3, 3, "di"};
  CHECK(refused.tell_to("room-1", false) == game::handover::retry);
  CHECK(refused.w.present(refused.id, "room-0"));
  REQUIRE(refused.w.forward(input(refused.id, 1))); // not in transit: at once
  REQUIRE(refused.eng.got.size() == 1);
  CHECK(refused.eng.got[0].first == "room-0");
}
