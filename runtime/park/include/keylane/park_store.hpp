// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/key.hpp"

namespace keylane {

/// The reason recorded for events parked behind an earlier parked event of
/// their key.
inline constexpr const char* parked_behind_reason = "key parked";

/// One parked event, as the store keeps it: the payload is opaque bytes
/// written by the event type's codec.
struct parked_record {
  /// Store-assigned, strictly increasing across the whole store; a key's
  /// records are returned in this order, which is their submission order.
  uint64_t id = 0;
  /// The event's sequence number in the runtime that parked it.
  uint64_t seq = 0;
  /// The event's key.
  keylane::key k;
  /// The encoded payload (empty for a payload kept as `object`).
  std::string payload;
  /// Why it was parked: the last failure, or `parked_behind_reason` for
  /// events that queued behind a parked event of their key.
  std::string reason;
  /// Handler attempts made before parking (0 for events parked behind).
  uint32_t attempts = 0;
  /// When it was parked.
  std::chrono::system_clock::time_point parked_at;
  /// The payload itself, for in-memory stores and payload types without a
  /// codec; durable stores ignore it.
  std::shared_ptr<const void> object;
};

/// A summary of one parked key.
struct parked_key {
  keylane::key k;
  /// Parked events of the key.
  uint64_t count = 0;
  /// The reason of its first parked record.
  std::string first_reason;
  /// When its first record was parked.
  std::chrono::system_clock::time_point parked_at;
};

/// One parked event as an operator sees it, its payload decoded.
template <class Payload>
struct parked_event {
  /// Store id: a key's events are listed in id order.
  uint64_t id = 0;
  /// Its sequence number in the run that parked it.
  uint64_t seq = 0;
  /// Its key.
  keylane::key k;
  /// The payload as submitted.
  Payload payload;
  /// Why it was parked.
  std::string reason;
  /// Handler attempts made before parking (0 for events parked behind).
  uint32_t attempts = 0;
  /// When it was parked.
  std::chrono::system_clock::time_point parked_at;
};

/// Where parked events live until an operator replays or discards them.
/// Implementations are thread-safe; each call is atomic (all or nothing)
/// and, for durable stores, durable when it returns success.
class park_store {
public:
  virtual ~park_store() = default;

  /// Appends `records` (ids are assigned by the store, in the given order).
  /// Returns the ids assigned.
  virtual caf::expected<std::vector<uint64_t>>
  append(std::vector<parked_record> records) = 0;

  /// Rewrites seq, reason, attempts and parked_at of the stored records
  /// with the ids of `records` (a replayed event that is parked again keeps
  /// its place in its key's order, with its latest failure). Unknown ids
  /// are skipped.
  virtual caf::error restamp(const std::vector<parked_record>& records) = 0;

  /// Every parked key with its summary, ordered by first parked time.
  virtual caf::expected<std::vector<parked_key>> keys() = 0;

  /// The parked records of `k`, in order.
  virtual caf::expected<std::vector<parked_record>> records(const key& k) = 0;

  /// True when `k` has parked records.
  virtual caf::expected<bool> is_parked(const key& k) = 0;

  /// Removes the records of `k` with id <= `up_to_id` (after a replay ran
  /// them); returns how many were removed.
  virtual caf::expected<uint64_t> remove_through(const key& k,
                                                 uint64_t up_to_id) = 0;

  /// Removes every record of `k`; returns how many were removed.
  virtual caf::expected<uint64_t> discard(const key& k) = 0;
};

/// A store in memory: fast, lost with the process.
[[nodiscard]] std::unique_ptr<park_store> make_memory_park_store();

/// How `open_sqlite_park_store` may treat its file.
enum class sqlite_access : uint8_t {
  /// Reads and writes; creates the file and the schema if missing (what a
  /// runtime does).
  create,
  /// Reads and writes a keylane park store that exists already; refuses a
  /// missing or empty file instead of making it a store.
  existing,
  /// Reads only (`SQLITE_OPEN_READONLY`): never creates, writes or switches
  /// the journal of the file, and reads a store whose file and directory
  /// are read-only to the caller. Every write call fails. A store without a
  /// write-ahead log (no runtime has it open) is read as an immutable file,
  /// which needs no lock files beside it.
  read_only,
};

/// A durable store in an SQLite file at `path`, opened as `access` says
/// (`create`: created if missing). Fails with `errc::park_store_failed` if
/// the file cannot be opened or read (with SQLite's own words, such as
/// "database disk image is malformed") or is not a keylane park store.
[[nodiscard]] caf::expected<std::unique_ptr<park_store>>
open_sqlite_park_store(const std::string& path,
                       sqlite_access access = sqlite_access::create);

} // namespace keylane
