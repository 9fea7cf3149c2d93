// SPDX-License-Identifier: Apache-2.0
#include "rocksdb_wal_damage.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"
#include "rocksdb_wal_reader.hpp"

namespace keylane::detail {

namespace {

constexpr std::string_view dropping = ": dropping ";

// A write batch's header: its first write's number and its count.
constexpr size_t batch_header = 12;

uint64_t fixed64(const char* p) noexcept {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(p[i]);
  return x;
}

uint32_t fixed32(const char* p) noexcept {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(p[i]);
  return x;
}

/// The puts and erases of one write batch, each with its number; any
/// other kind of write (or a column family but the default) fails the
/// batch's Iterate.
class batch_keys final : public rocksdb::WriteBatch::Handler {
public:
  struct write {
    uint64_t seq = 0;
    std::string key;
    std::string value;
    bool put = true;
  };

  explicit batch_keys(uint64_t seq) : seq_(seq) {}

  rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& k,
                        const rocksdb::Slice& v) override {
    if (family != 0)
      return rocksdb::Status::NotSupported("a column family");
    writes.push_back({seq_++, k.ToString(), v.ToString(), true});
    return rocksdb::Status::OK();
  }

  rocksdb::Status DeleteCF(uint32_t family,
                           const rocksdb::Slice& k) override {
    if (family != 0)
      return rocksdb::Status::NotSupported("a column family");
    writes.push_back({seq_++, k.ToString(), {}, false});
    return rocksdb::Status::OK();
  }

  std::vector<write> writes;

private:
  uint64_t seq_;
};

} // namespace

void wal_damage_listener::Logv(const char*, va_list) {
  // Lines without a level: RocksDB's informational chatter.
}

void wal_damage_listener::Logv(rocksdb::InfoLogLevel level,
                               const char* format, va_list ap) {
  if (level < rocksdb::InfoLogLevel::WARN_LEVEL)
    return;
  char buf[2048];
  std::vsnprintf(buf, sizeof(buf), format, ap);
  std::string_view line{buf};
  // "[db/db_impl/db_impl_open.cc:982] /dir/000004.log: dropping 31388
  // bytes; Corruption: checksum mismatch"
  auto at = line.find(dropping);
  if (at == std::string_view::npos)
    return;
  auto start = line.rfind("] ", at);
  auto file = line.substr(start == std::string_view::npos ? 0 : start + 2,
                          at - (start == std::string_view::npos ? 0
                                                                : start + 2));
  if (file.size() < 4 || file.substr(file.size() - 4) != ".log")
    return;
  auto rest = line.substr(at + dropping.size());
  auto bytes = std::strtoull(std::string{rest}.c_str(), nullptr, 10);
  auto semi = rest.find("; ");
  std::lock_guard<std::mutex> guard{mtx_};
  if (std::find(damage_.files.begin(), damage_.files.end(), file)
      == damage_.files.end())
    damage_.files.emplace_back(file);
  damage_.bytes += bytes;
  if (damage_.what.empty() && semi != std::string_view::npos)
    damage_.what = std::string{rest.substr(semi + 2)};
}

wal_damage wal_damage_listener::damage() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return damage_;
}

wal_loss measure_wal_loss(const std::string& path, rocksdb::DB& kept) {
  wal_loss out;
  auto records = read_wal_records(path);
  if (!records) {
    out.why_not = render(records.error());
    return out;
  }
  const uint64_t kept_last = kept.GetLatestSequenceNumber();
  // The number of the last write the logs are known to hold, the writes
  // after `kept_last` in whole records, and those of them whose keys
  // cannot be told (a batch of other kinds of writes).
  uint64_t end = kept_last;
  uint64_t readable = 0;
  uint64_t unattributed = 0;
  // Each key's last readable write after `kept_last`.
  std::map<std::string, batch_keys::write> last;
  // The records that cannot be read after the last whole one.
  std::vector<const wal_record*> trailing;
  for (const auto& r : *records) {
    if (r.what != wal_record::kind::whole || r.payload.size() < batch_header) {
      trailing.push_back(&r);
      continue;
    }
    trailing.clear();
    auto seq = fixed64(r.payload.data());
    auto count = fixed32(r.payload.data() + 8);
    if (count == 0 || seq + count - 1 <= kept_last)
      continue;
    end = std::max(end, seq + count - 1);
    batch_keys keys{seq};
    if (!rocksdb::WriteBatch{r.payload}.Iterate(&keys).ok()
        || keys.writes.size() != count) {
      auto n = seq + count - 1 - std::max(seq - 1, kept_last);
      readable += n;
      unattributed += n;
      continue;
    }
    for (auto& w : keys.writes) {
      if (w.seq <= kept_last)
        continue;
      ++readable;
      if (w.key.empty() || w.key[0] != '\0') // not a reserved entry
        last[w.key] = std::move(w);
    }
  }
  if (!trailing.empty()) {
    // Past the last whole record: counted only when it is one damaged
    // batch that follows on the last write known and whose count its
    // writes bear out (a changed count, or a changed length, would not
    // parse to exactly that many writes; a changed number would not
    // follow on). Its keys are not trusted: it counts as unreadable.
    const auto* r = trailing.front();
    auto ok = trailing.size() == 1 && r->what == wal_record::kind::damaged
              && r->payload.size() >= batch_header;
    if (ok) {
      auto seq = fixed64(r->payload.data());
      auto count = fixed32(r->payload.data() + 8);
      batch_keys keys{seq};
      ok = seq == end + 1 && count > 0
           && rocksdb::WriteBatch{r->payload}.Iterate(&keys).ok()
           && keys.writes.size() == count;
      if (ok)
        end += count;
    }
    if (!ok)
      out.why_not = "the damage is at the end of the log, past the last"
                    " record that can be read, and the number of key"
                    " writes it held cannot be read";
  }
  out.counted = out.why_not.empty();
  out.writes = out.counted ? end - kept_last : readable;
  out.unreadable = out.writes - (readable - unattributed);
  std::string value;
  for (const auto& [k, w] : last) {
    ++out.readable_keys;
    if (!w.put)
      continue; // an erase: the key comes back, with no events lost
    auto now = decode_state_record(w.value);
    uint64_t before = 0;
    auto st = kept.Get(rocksdb::ReadOptions{}, k, &value);
    if (st.ok()) {
      if (auto old = decode_state_record(value))
        before = old->events;
      else
        out.events_read = false;
    } else if (!st.IsNotFound()) {
      out.events_read = false;
    }
    if (!now)
      out.events_read = false;
    else if (now->events > before)
      out.readable_events += now->events - before;
  }
  return out;
}

std::string describe(const wal_damage& d) {
  std::string files;
  for (const auto& f : d.files)
    files += (files.empty() ? "" : ", ") + f;
  auto one = d.files.size() == 1;
  return std::string{one ? "the write-ahead log " : "the write-ahead logs "}
         + files + (one ? " is" : " are") + " damaged (" + d.what + ", "
         + std::to_string(d.bytes) + " bytes unreadable)";
}

std::string describe(const wal_damage& d, const wal_loss& loss,
                     bool read_only) {
  auto n = [](uint64_t x) { return std::to_string(x); };
  auto went = std::string{read_only ? " would go back" : " went back"};
  auto out = "point-in-time recovery (state.recover = \"point_in_time\"): "
             + describe(d)
             + (read_only ? "; read as of the damage, read-only: nothing on"
                            " disk changed. A writer's recovery would drop"
                            " for good "
                          : "; opened as of the damage, dropping for good ");
  if (!loss.counted) {
    out += "everything the logs hold after it, and how much that is is"
           " unknown: " + loss.why_not + ". The " + n(loss.writes)
           + " key writes readable after the damage change "
           + n(loss.readable_keys) + " keys, but any other key may"
           + (read_only ? " go back" : " have gone back")
           + " too, with events that cannot be counted: compare"
             " keylane-state list of the copy from before with after";
  } else if (loss.unreadable == 0) {
    out += "the " + n(loss.writes) + " key writes after it, all of them"
           " readable: " + n(loss.readable_keys) + " keys" + went
           + " to an older state or to none";
    out += loss.events_read
             ? ", losing " + n(loss.readable_events) + " events"
             : ", losing events that cannot be counted (a write holds no"
               " keylane state record)";
  } else {
    out += "the " + n(loss.writes) + " key writes after it, "
           + n(loss.unreadable) + " of them unreadable: at most "
           + n(loss.keys_at_most()) + " keys" + went
           + " to an older state or to none (the " + n(loss.readable_keys)
           + " keys the readable writes change, and one for each unreadable"
             " write); how many events is unknown";
    if (loss.events_read)
      out += " (the readable writes hold " + n(loss.readable_events)
             + " more than the states kept)";
  }
  if (!read_only)
    out += ". Set state.recover back to \"strict\"";
  return out;
}

} // namespace keylane::detail
