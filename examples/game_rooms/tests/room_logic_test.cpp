// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <catch2/catch.hpp>

#include "../room_logic.hpp"

namespace {

// A room's surroundings that accept everything and send nowhere.
struct quiet_io final : game::room_io {
  void send(uint64_t, const std::shared_ptr<const std::string>&) override {}
  void left(const std::string&, uint64_t) override {}
  game::handover hand_over(const std::string&, const std::string&,
                           const game::player&) override {
    return game::handover::accepted;
  }
  bool present(uint64_t, const std::string&) override { return true; }
};

void apply(game::room_logic& room, game::room_state& s, game::room_io& io,
           game::room_msg::kind what, uint64_t player, std::string name = {}) {
  game::room_msg m;
  m.what = what;
  m.player = player;
  m.name = std::move(name);
  room.apply(s, m, io);
}

} // namespace

// The client: one connection joining and leaving with 15,000 fresh
// names, while others play.
TEST_CASE("a room keeps the scores of its players and of at most "
          "kept_scores names that left, the highest",
          "[game_rooms][room_logic]") {
  using kind = game::room_msg::kind;
  game::room_logic room{"room-0", "room-1", 0};
  game::room_state s;
  quiet_io io;
  apply(room, s, io, kind::join, 1, "stays");
  s.scores["stays"] = 3;
  apply(room, s, io, kind::join, 2, "star");
  s.scores["star"] = 50;
  apply(room, s, io, kind::leave, 2);
  size_t most = 0;
  for (uint64_t i = 0; i < 15000; ++i) {
    auto id = 100 + i;
    apply(room, s, io, kind::join, id, "fresh" + std::to_string(i));
    if (i % 7 == 0)
      s.scores["fresh" + std::to_string(i)] = 1;
    apply(room, s, io, kind::leave, id);
    most = std::max(most, s.scores.size());
  }
  CHECK(most <= 2 + game::room_logic::kept_scores
                   + game::room_logic::kept_scores / 4);
  REQUIRE(s.scores.count("stays") == 1);
  CHECK(s.scores.at("stays") == 3);
  REQUIRE(s.scores.count("star") == 1);
  CHECK(s.scores.at("star") == 50);
  // The names that scored outrank those that did not: of the ~2,100 that
  // scored, the room still knows those it has room for.
  size_t scored = 0;
  for (const auto& [name, points] : s.scores)
    scored += points > 0;
  CHECK(scored >= game::room_logic::kept_scores);
}
