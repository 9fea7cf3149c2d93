// SPDX-License-Identifier: Apache-2.0
#include "world.hpp"

#include <cstdlib>

namespace game {

world::world(size_t rooms, size_t max_open, server_stats& stats)
  : rooms_(rooms), max_open_(max_open), stats_(stats) {}

std::string world::room_name(size_t i) { return "room-" + std::to_string(i); }

bool world::known(const std::string& room) const {
  if (room.size() < 6 || room.size() > 15 || room.compare(0, 5, "room-") != 0)
    return false;
  if (room[5] == '0' && room.size() > 6)
    return false;
  size_t i = 0;
  for (size_t j = 5; j < room.size(); ++j) {
    if (room[j] < '0' || room[j] > '9')
      return false;
    i = i * 10 + static_cast<size_t>(room[j] - '0');
  }
  return i < rooms_;
}

std::string world::next_room(const std::string& room) const {
  size_t i = std::strtoull(room.c_str() + 5, nullptr, 10);
  return room_name((i + 1) % rooms_);
}

bool world::may_open(const std::string& room) const {
  auto i = occupancy_.find(room);
  if (i != occupancy_.end() && i->second > 0)
    return true;
  return occupancy_.size() < max_open_;
}

void world::enter(const std::string& room) { ++occupancy_[room]; }

void world::exit(const std::string& room) {
  auto i = occupancy_.find(room);
  if (i != occupancy_.end() && --i->second == 0)
    occupancy_.erase(i);
}

uint64_t world::join(std::shared_ptr<client> c, const std::string& room,
                     std::string name, std::string& why) {
  if (!known(room)) {
    ++stats_.unknown_room;
    why = "unknown_room";
    return 0;
  }
  std::lock_guard<std::mutex> guard{mu_};
  if (!may_open(room)) {
    // The cap is a limit on open rooms, not a queue: a queued room would
    // tick late for everyone in it, so the player is told and may pick
    // another room or try again.
    ++stats_.rooms_full;
    why = "rooms_full";
    return 0;
  }
  auto id = ids_.next();
  room_msg m;
  m.what = room_msg::kind::join;
  m.player = id;
  m.name = std::move(name);
  if (!eng_->submit(room, std::move(m))) {
    ++stats_.busy;
    why = "busy";
    return 0;
  }
  players_.emplace(id, entry{c, room, false, {}});
  enter(room);
  ++stats_.joins;
  return id;
}

bool world::forward(room_msg m) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = players_.find(m.player);
  if (i == players_.end())
    return false;
  if (i->second.in_transit) {
    if (i->second.held.size() >= max_held) {
      ++stats_.busy;
      return false;
    }
    i->second.held.push_back(std::move(m));
    return true;
  }
  if (!eng_->submit(i->second.room, std::move(m))) {
    ++stats_.busy;
    return false;
  }
  return true;
}

void world::leave(uint64_t player) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = players_.find(player);
  if (i == players_.end())
    return;
  room_msg m;
  m.what = room_msg::kind::leave;
  m.player = player;
  if (i->second.in_transit) { // never refused: the arrival applies it
    i->second.held.push_back(std::move(m));
    return;
  }
  if (!eng_->submit(i->second.room, std::move(m))) {
    ++stats_.leave_retries;
    pending_leaves_.push_back(player);
    leaves_pending_ = true;
  }
}

void world::retry_leaves() {
  if (!leaves_pending_.load(std::memory_order_relaxed))
    return;
  std::vector<uint64_t> todo;
  {
    std::lock_guard<std::mutex> guard{mu_};
    todo.swap(pending_leaves_);
    leaves_pending_ = false;
  }
  for (auto id : todo)
    leave(id);
}

std::vector<std::string> world::open_rooms() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<std::string> out;
  out.reserve(occupancy_.size());
  for (auto& [room, n] : occupancy_)
    out.push_back(room);
  return out;
}

size_t world::players() const {
  std::lock_guard<std::mutex> guard{mu_};
  return players_.size();
}

void world::send(uint64_t player,
                 const std::shared_ptr<const std::string>& msg) {
  std::shared_ptr<client> c;
  {
    std::lock_guard<std::mutex> guard{mu_};
    auto i = players_.find(player);
    if (i == players_.end())
      return;
    c = i->second.conn.lock();
  }
  if (c)
    c->send(msg);
}

void world::left(const std::string& room, uint64_t player) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = players_.find(player);
  if (i == players_.end() || i->second.room != room)
    return;
  players_.erase(i);
  exit(room);
}

handover world::hand_over(const std::string& from, const std::string& to,
                          const player& p) {
  return move(from, to, p, false,
              [&](room_msg m) { return eng_->submit(to, std::move(m)); });
}

handover world::move(const std::string& from, const std::string& to,
                     const player& p, bool in_transit,
                     const std::function<bool(room_msg)>& send) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = players_.find(p.id);
  if (i == players_.end() || i->second.room != from || i->second.in_transit)
    return handover::accepted; // gone meanwhile: nothing to move
  if (!may_open(to)) {
    ++stats_.transfers_refused;
    return handover::refused;
  }
  room_msg m;
  m.what = room_msg::kind::transfer;
  m.player = p.id;
  m.seq = p.ack;
  m.name = p.name;
  if (!send(std::move(m))) {
    ++stats_.transfer_retries;
    return handover::retry;
  }
  // Re-pointed before the lock drops, and `to` counted as open from now:
  // a submit goes to `to` behind the transfer, or (in transit) waits here
  // for the arrival.
  i->second.room = to;
  i->second.in_transit = in_transit;
  enter(to);
  exit(from);
  ++stats_.transfers;
  return handover::accepted;
}

world::arrival world::arrive(uint64_t player, const std::string& room) {
  std::lock_guard<std::mutex> guard{mu_};
  arrival a;
  auto i = players_.find(player);
  if (i == players_.end() || i->second.room != room || !i->second.in_transit)
    return a;
  a.here = true;
  i->second.in_transit = false;
  a.held.swap(i->second.held);
  return a;
}

bool world::present(uint64_t player, const std::string& room) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = players_.find(player);
  return i != players_.end() && i->second.room == room;
}

} // namespace game
