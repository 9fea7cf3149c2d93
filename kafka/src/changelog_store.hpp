// SPDX-License-Identifier: Apache-2.0
#pragma once

// The state store of a source with `kafka.changelog_topic` (private to
// keylane::kafka): a Kafka changelog topic in front of a local store.

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/kafka/source_settings.hpp"
#include "keylane/state_store.hpp"
#include "rdkafka.hpp"

namespace keylane::kafka {

namespace detail {

/// Integer keys carry this header in the changelog, so a restore gives
/// them back as integers.
inline constexpr const char* int_key_header = "keylane.int_key";

} // namespace detail

/// What one restore read.
struct restore_report {
  uint64_t records = 0;
  uint64_t bytes = 0;
  double seconds = 0;
};

/// Keyed state whose truth is a compacted Kafka topic. A write produces
/// every entry (one key's whole state record, its source positions
/// included) to the changelog partition of the input partition the key's
/// records come from, waits until the brokers acknowledged them all
/// (idempotent producer, `acks=all`), and only then writes them to the
/// local store, which is a cache: it never holds a state the changelog
/// lacks. Reads go to the local store; `restore` brings one partition's
/// keys in it up to the changelog's end.
///
/// A write for a partition this member does not own (it was revoked) is
/// not produced and not cached: its changes belong to events whose
/// offsets were not committed here, which the partition's next owner runs
/// again. Without this, a write that came late could overwrite the next
/// owner's newer state in the changelog.
///
/// Thread-safety: every member may be called from any thread.
class changelog_store final : public state_store {
public:
  /// Checks that the changelog topic exists (its partition count) and
  /// connects. `marker_path` keeps, beside a durable local store, how far
  /// each partition's changelog is in it; empty: restore from the start.
  [[nodiscard]] static caf::expected<std::unique_ptr<changelog_store>>
  open(const source_settings& s, std::unique_ptr<state_store> local,
       std::string marker_path);

  ~changelog_store() override;
  changelog_store(const changelog_store&) = delete;
  changelog_store& operator=(const changelog_store&) = delete;

  /// The changelog topic's partition count.
  [[nodiscard]] int32_t partitions() const noexcept { return partitions_; }

  /// Whether writes for `partition` go out (this member owns it).
  void own(int32_t partition, bool on);

  /// Reads `partition` of the changelog from where the local store is up
  /// to its end (the end when the call starts) into the local store.
  [[nodiscard]] caf::expected<restore_report> restore(int32_t partition);

  [[nodiscard]] caf::expected<std::optional<std::string>>
  read(const key& k) override;
  [[nodiscard]] caf::error write(const std::vector<state_entry>& entries,
                                 bool sync) override;
  [[nodiscard]] caf::expected<bool> erase(const key& k) override;
  [[nodiscard]] caf::error
  scan(const std::function<bool(const key&, std::string_view bytes)>& fn)
    override;
  [[nodiscard]] std::string describe() const override;

  /// Records and bytes produced to the changelog, and writes not produced
  /// because their partition was not owned.
  std::atomic<uint64_t> records_written{0}, bytes_written{0},
    records_dropped{0};

private:
  changelog_store() = default;
  /// The changelog partition of a key's state record: that of the first
  /// input stream in its positions (true), else by the key's hash (false).
  [[nodiscard]] std::pair<int32_t, bool>
  partition_of(const key& k, std::string_view bytes) const;
  /// Produces `entries` (null bytes: a delete) and waits for them all;
  /// the highest offset written per partition goes to `ends`.
  caf::error produce(const std::vector<std::pair<int32_t, const state_entry*>>&
                       entries,
                     bool deletes, std::vector<int64_t>& ends);
  void advance_markers(const std::vector<int64_t>& ends);
  /// Starts `reader_`.
  caf::error open_reader();
  void save_markers();

  source_settings cfg_;
  std::unique_ptr<state_store> local_;
  std::string marker_path_;
  /// The changelog's producer and its topic handle (destroyed first).
  rdkafka::client_ptr rk_;
  rdkafka::topic_ptr topic_;
  int32_t partitions_ = 0;
  /// The restores' consumer (assigned, never in a group), used by one
  /// restore at a time; destroyed before the producer.
  rdkafka::client_ptr reader_;
  std::mutex restore_mu_;

  std::mutex produce_mu_; // one batch in flight at a time
  mutable std::mutex mu_; // owned_, markers_
  /// Per partition, how many assigned input partitions map to it.
  std::vector<int> owned_;
  /// Per partition, the changelog offset up to which the local store holds
  /// every record (-1: unknown, restore from the start).
  std::vector<int64_t> markers_;
};

/// A state store that forwards to `store`, for the runtime to own while
/// the source keeps `store` (its restores and counters) as long as it
/// needs.
[[nodiscard]] std::unique_ptr<state_store>
share(std::shared_ptr<changelog_store> store);

} // namespace keylane::kafka
