// SPDX-License-Identifier: Apache-2.0
#include "room_logic.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "room_map.hpp"

namespace game {

namespace {

constexpr uint64_t respawn_ticks = 100; // 5 s at 20 Hz

int32_t clamp_dir(int32_t d) noexcept { return d < 0 ? -1 : d > 0 ? 1 : 0; }

// Stands in for the simulation a real game runs per tick; spinning, not
// sleeping, because the cost is CPU time the engine has to find.
void burn(uint32_t us) {
  if (us == 0)
    return;
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

} // namespace

room_logic::room_logic(std::string name, std::string next,
                       uint32_t tick_cost_us)
  : name_(std::move(name)), next_(std::move(next)),
    tick_cost_us_(tick_cost_us) {}

void room_logic::apply(room_state& s, room_msg& m, room_io& io) {
  if (s.pickups.empty())
    for (auto [x, y] : room_map::pickup_spots())
      s.pickups.push_back(pickup{x, y, 0});
  auto it = std::find_if(s.players.begin(), s.players.end(),
                         [&](const player& p) { return p.id == m.player; });
  switch (m.what) {
    case room_msg::kind::tick:
      tick(s, io);
      return;
    case room_msg::kind::join:
      if (it == s.players.end())
        add(s, io, m.player, std::move(m.name), 0, false);
      return;
    case room_msg::kind::transfer:
      if (it == s.players.end())
        add(s, io, m.player, std::move(m.name), m.seq, true);
      return;
    case room_msg::kind::input:
      // An input for a player that already went through the portal raced
      // with the hand-over; the next room gets the player's later inputs.
      if (it == s.players.end())
        return;
      it->ack = std::max(it->ack, m.seq);
      if (!it->leaving) {
        it->dx = clamp_dir(m.dx);
        it->dy = clamp_dir(m.dy);
      }
      return;
    case room_msg::kind::chat:
      if (it != s.players.end())
        broadcast(s, io,
                  "chat " + std::to_string(it->id) + " " + it->name + " "
                    + m.text);
      return;
    case room_msg::kind::leave:
      if (it != s.players.end()) {
        s.players.erase(it);
        io.left(name_, m.player);
      }
      return;
  }
}

void room_logic::add(room_state& s, room_io& io, uint64_t id, std::string name,
                     uint64_t ack, bool arrived) {
  player p;
  p.id = id;
  p.name = std::move(name);
  p.ack = ack;
  // Spread newcomers over the left part of the map so a crowd is visible
  // (by arrival order: ids are clock readings and mostly end in 000).
  auto n = s.players.size();
  p.x = room_map::arrival_x + static_cast<int32_t>(n % 4);
  p.y = 1 + static_cast<int32_t>((n / 4) % (room_map::height - 2));
  if (room_map::wall(p.x, p.y)) {
    p.x = room_map::arrival_x;
    p.y = room_map::arrival_y;
  }
  s.scores.emplace(p.name, 0);
  auto hello = std::make_shared<const std::string>(
    "welcome " + std::to_string(id) + " " + name_ + " "
    + std::to_string(room_map::width) + " " + std::to_string(room_map::height)
    + " " + room_map::rows() + (arrived ? " portal" : " join"));
  s.players.push_back(std::move(p));
  bound_scores(s);
  io.send(id, hello);
}

void room_logic::bound_scores(room_state& s) {
  // Trimmed in steps of a quarter of the bound, so a stream of fresh
  // names costs a sort of ~1,250 scores per 250 joins, not one per join.
  auto keep = s.players.size() + kept_scores;
  if (s.scores.size() <= keep + kept_scores / 4)
    return;
  std::unordered_set<std::string_view> here;
  for (const auto& p : s.players)
    here.insert(p.name);
  std::vector<std::map<std::string, int64_t>::iterator> gone;
  for (auto i = s.scores.begin(); i != s.scores.end(); ++i)
    if (here.count(i->first) == 0)
      gone.push_back(i);
  auto drop = std::min(gone.size(), s.scores.size() - keep);
  std::nth_element(gone.begin(), gone.begin() + static_cast<ptrdiff_t>(drop),
                   gone.end(), [](auto a, auto b) {
                     return a->second < b->second;
                   });
  for (size_t i = 0; i < drop; ++i)
    s.scores.erase(gone[i]);
}

void room_logic::broadcast(room_state& s, room_io& io, std::string text) {
  auto msg = std::make_shared<const std::string>(std::move(text));
  for (auto& p : s.players)
    io.send(p.id, msg);
}

bool room_logic::has_waiting(const room_state& s) noexcept {
  return std::any_of(s.players.begin(), s.players.end(),
                     [](const player& p) { return p.leaving; });
}

void room_logic::hand_over_waiting(room_state& s, room_io& io) {
  for (auto it = s.players.begin(); it != s.players.end();) {
    if (!it->leaving) {
      ++it;
      continue;
    }
    switch (io.hand_over(name_, next_, *it)) {
      case handover::accepted:
        it = s.players.erase(it);
        continue;
      case handover::refused:
        // The next room cannot open: the player steps back off the portal
        // and stays here, told why.
        it->leaving = false;
        it->x = room_map::portal_x - 2;
        it->y = room_map::portal_y;
        it->dx = it->dy = 0;
        io.send(it->id, std::make_shared<const std::string>(
                          "err portal_closed " + next_));
        break;
      case handover::retry:
        break;
    }
    ++it;
  }
}

void room_logic::forget_absent(room_state& s, room_io& io) {
  s.players.erase(std::remove_if(s.players.begin(), s.players.end(),
                                 [&](const player& p) {
                                   return !io.present(p.id, name_);
                                 }),
                  s.players.end());
}

void room_logic::tick(room_state& s, room_io& io) {
  ++s.tick;
  burn(tick_cost_us_);
  for (auto& p : s.players) {
    if (p.leaving)
      continue;
    room_map::step(p.x, p.y, p.dx, p.dy);
    for (auto& o : s.pickups)
      if (o.respawn_tick <= s.tick && o.x == p.x && o.y == p.y) {
        ++s.scores[p.name];
        o.respawn_tick = s.tick + respawn_ticks;
      }
    if (p.x == room_map::portal_x && p.y == room_map::portal_y) {
      p.leaving = true;
      p.dx = p.dy = 0;
      io.send(p.id, std::make_shared<const std::string>("portal " + next_));
    }
  }
  if (has_waiting(s))
    hand_over_waiting(s, io);
  std::string snap = "snap " + name_ + " " + std::to_string(s.tick) + "\n";
  snap.reserve(snap.size() + s.players.size() * 40 + 80);
  for (auto& p : s.players) {
    snap += "p ";
    snap += std::to_string(p.id);
    snap += ' ';
    snap += std::to_string(p.x);
    snap += ' ';
    snap += std::to_string(p.y);
    snap += ' ';
    snap += std::to_string(s.scores[p.name]);
    snap += ' ';
    snap += std::to_string(p.ack);
    snap += ' ';
    snap += p.name;
    snap += '\n';
  }
  for (auto& o : s.pickups)
    if (o.respawn_tick <= s.tick)
      snap += "o " + std::to_string(o.x) + " " + std::to_string(o.y) + "\n";
  auto msg = std::make_shared<const std::string>(std::move(snap));
  for (auto& p : s.players)
    io.send(p.id, msg);
}

} // namespace game
