// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which player is in which room, and how many rooms are open: the one
// place that decides joins, hand-overs through portals and the room cap.
// Every "where is player X, then submit to its room" runs under one lock,
// so a player's events reach its rooms in the order they were sent, also
// while a portal moves it.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
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

  /// Submits the leaves that found their room's queue full (cheap when
  /// there are none: every room's tick calls it).
  void retry_leaves();

  /// Rooms with at least one player (the ones to tick).
  [[nodiscard]] std::vector<std::string> open_rooms() const;

  /// Moves `p` from `from` to `to` by calling `send` with the `transfer`
  /// (under the lock, so it must not block): `retry` when it returns false.
  /// `in_transit` is for a `send` whose message may reach `to` after an
  /// input submitted to `to` later (a keylane `tell`, which leaves when the
  /// sending event ends): the player then points at `to` only when `to`
  /// applies the transfer (`arrive`), and what it sends meanwhile waits
  /// here.
  handover move(const std::string& from, const std::string& to,
                const player& p, bool in_transit,
                const std::function<bool(room_msg)>& send);

  /// What a room does with a player that came through a portal.
  struct arrival {
    /// False when the player is not on its way to this room (gone).
    bool here = false;
    /// Its inputs, chat and leave sent while in transit, in order: the
    /// room applies them right after the transfer.
    std::vector<room_msg> held;
  };

  /// `room` applies the transfer of `player` (a move `in_transit`).
  [[nodiscard]] arrival arrive(uint64_t player, const std::string& room);

  /// Most messages a player in transit may send before `busy`.
  static constexpr size_t max_held = 64;

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
    // Between a room's `tell` of the transfer and its arrival: `room` is
    // the next room, and `held` keeps what the player sent meanwhile.
    bool in_transit = false;
    std::vector<room_msg> held;
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
  std::atomic<bool> leaves_pending_{false};
};

} // namespace game
