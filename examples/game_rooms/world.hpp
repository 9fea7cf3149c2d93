// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which player is in which room, and how many rooms are open: the one
// place that decides joins, hand-overs through portals and the room cap.
// Every "where is player X, then submit to its room" runs under one lock,
// so a player's events reach its rooms in the order they were sent, also
// while a portal moves it.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client.hpp"
#include "player_ids.hpp"
#include "room_io.hpp"
#include "room_msg.hpp"
#include "rooms_engine.hpp"
#include "server_stats.hpp"

namespace game {

/// The server's directory of players and rooms.
///
/// Thread-safety: every member may be called from any thread (network
/// threads, room threads, the ticker). `engine().submit` is called under
/// the directory's lock and must not block (both engines never do).
class world final : public room_io {
public:
  /// A world of rooms `room-0` .. `room-<rooms-1>`, at most `max_open` of
  /// them with players at once.
  world(size_t rooms, size_t max_open, server_stats& stats);

  /// Sets the engine the rooms run on (before the first join).
  void attach(rooms_engine* eng) noexcept { eng_ = eng; }

  /// The name of room `i`.
  [[nodiscard]] static std::string room_name(size_t i);

  /// The room a portal in `room` leads to.
  [[nodiscard]] std::string next_room(const std::string& room) const;

  /// True for `room-<i>` with i below the room count.
  [[nodiscard]] bool known(const std::string& room) const;

  /// Joins `c` as `name` into `room`: its new player id, or 0 with `why`
  /// set to an error code ("unknown_room", "rooms_full", "busy").
  uint64_t join(std::shared_ptr<client> c, const std::string& room,
                std::string name, std::string& why);

  /// Sends an input or chat of `player` to its room; false when it has no
  /// room or the room's queue is full.
  bool forward(room_msg m);

  /// Takes `player` out of its room, now or (queue full) at `retry_leaves`.
  void leave(uint64_t player);

  /// Submits the leaves that found their room's queue full.
  void retry_leaves();

  /// Rooms with at least one player (the ones to tick).
  [[nodiscard]] std::vector<std::string> open_rooms() const;

  /// The open rooms whose previous tick has run, marked as ticking: a room
  /// that falls behind skips ticks instead of queueing them (`skipped`
  /// counts the others).
  [[nodiscard]] std::vector<std::string> rooms_to_tick(uint64_t& skipped);

  /// The tick of `room` ran (or was not submitted).
  void tick_done(const std::string& room);

  /// Players connected now.
  [[nodiscard]] size_t players() const;

  // -- room_io ----------------------------------------------------------------

  void send(uint64_t player,
            const std::shared_ptr<const std::string>& msg) override;
  void left(const std::string& room, uint64_t player) override;
  handover hand_over(const std::string& from, const std::string& to,
                     const player& p) override;
  bool present(uint64_t player, const std::string& room) override;

private:
  struct entry {
    std::weak_ptr<client> conn;
    std::string room;
  };

  // Both with mu_ held.
  bool may_open(const std::string& room) const;
  void enter(const std::string& room);
  void exit(const std::string& room);

  size_t rooms_;
  size_t max_open_;
  server_stats& stats_;
  rooms_engine* eng_ = nullptr;
  player_ids ids_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, entry> players_;
  std::unordered_map<std::string, size_t> occupancy_;
  std::vector<uint64_t> pending_leaves_;
  std::unordered_set<std::string> ticking_;
};

} // namespace game
