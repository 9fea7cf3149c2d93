// SPDX-License-Identifier: Apache-2.0
#include "changelog_store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "keylane/detail/state_record.hpp"
#include "keylane/errc.hpp"

namespace keylane::kafka {

namespace {

using clock = std::chrono::steady_clock;

// How long a write waits for its acknowledgements before it fails (and
// the state writer retries it); librdkafka gives up on a record then too.
constexpr int delivery_timeout_ms = 30000;

// One write's records in flight.
struct batch {
  std::mutex mu;
  size_t pending = 0;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::vector<int64_t> ends;
};

std::string key_bytes(const key& k) {
  return k.is_integer() ? std::to_string(k.integer()) : k.str();
}

} // namespace

caf::expected<std::unique_ptr<changelog_store>>
changelog_store::open(const source_settings& s,
                      std::unique_ptr<state_store> local,
                      std::string marker_path) {
  std::unique_ptr<changelog_store> out{new changelog_store};
  out->cfg_ = s;
  out->local_ = std::move(local);
  out->marker_path_ = std::move(marker_path);
  auto conf = rdkafka::new_conf();
  for (const auto& [k, v] : std::map<std::string, std::string>{
         {"bootstrap.servers", s.bootstrap_servers},
         {"enable.idempotence", "true"},
         {"linger.ms", "2"},
         {"message.timeout.ms", std::to_string(delivery_timeout_ms)},
         {"log_level", s.properties.count("log_level")
                         ? s.properties.at("log_level") : "6"}})
    if (auto err = rdkafka::set(*conf, k, v, s.origin, "changelog"))
      return err;
  rd_kafka_conf_set_dr_msg_cb(
    conf.get(), [](rd_kafka_t*, const rd_kafka_message_t* m, void*) {
      auto* b = static_cast<batch*>(m->_private);
      std::lock_guard<std::mutex> guard{b->mu};
      --b->pending;
      if (m->err) {
        if (!b->err)
          b->err = m->err;
      } else if (m->partition >= 0
                 && static_cast<size_t>(m->partition) < b->ends.size()) {
        auto& e = b->ends[static_cast<size_t>(m->partition)];
        e = std::max(e, m->offset);
      }
    });
  auto rk = rdkafka::new_client(RD_KAFKA_PRODUCER, std::move(conf),
                                "kafka changelog producer");
  if (!rk)
    return std::move(rk.error());
  out->rk_ = std::move(*rk);
  // Every topic's metadata, not the one topic's: asking for a topic by
  // name lets a broker (the mock always) create it, uncompacted.
  const rd_kafka_metadata_t* raw_md = nullptr;
  auto merr = rd_kafka_metadata(out->rk_.get(), 1, nullptr, &raw_md, 10000);
  rdkafka::metadata_ptr md{raw_md};
  const rd_kafka_metadata_topic_t* found = nullptr;
  for (int i = 0; !merr && i < md->topic_cnt; ++i)
    if (s.changelog_topic == md->topics[i].topic && !md->topics[i].err)
      found = &md->topics[i];
  if (!found) {
    std::string why = merr ? rdkafka::to_string(merr) : "no such topic";
    return make_error(errc::startup_failed,
                      s.origin + ": kafka.changelog_topic \""
                        + s.changelog_topic + "\": " + why
                        + " (create it, compacted, with as many partitions "
                          "as the input topics)");
  }
  out->partitions_ = found->partition_cnt;
  // After the check: a topic handle asks for its topic's metadata.
  out->topic_ = rdkafka::new_topic(out->rk_.get(), s.changelog_topic);
  out->owned_.assign(static_cast<size_t>(out->partitions_), 0);
  out->markers_.assign(static_cast<size_t>(out->partitions_), -1);
  if (!out->marker_path_.empty()) {
    // "<topic> <partitions>" then "<partition> <offset>" lines; a file of
    // another topic or shape is ignored (a full restore).
    std::ifstream in{out->marker_path_};
    std::string topic;
    int32_t n = 0;
    if (in >> topic >> n && topic == s.changelog_topic
        && n == out->partitions_) {
      int32_t p;
      int64_t at;
      while (in >> p >> at)
        if (p >= 0 && p < n)
          out->markers_[static_cast<size_t>(p)] = at;
    }
  }
  return out;
}

changelog_store::~changelog_store() {
  // The reader first, then the producer flushes; its topic handle and
  // then itself go with the members (topic_ is declared after rk_).
  reader_.reset();
  if (rk_)
    rd_kafka_flush(rk_.get(), 5000);
}

void changelog_store::own(int32_t partition, bool on) {
  std::lock_guard<std::mutex> guard{mu_};
  if (partition < 0 || partition >= partitions_)
    return;
  auto& n = owned_[static_cast<size_t>(partition)];
  n = std::max(0, n + (on ? 1 : -1));
}

std::pair<int32_t, bool>
changelog_store::partition_of(const key& k, std::string_view bytes) const {
  if (auto rec = keylane::detail::decode_state_record(bytes))
    for (const auto& [stream, pos] : rec->origins) {
      auto slash = stream.rfind('/');
      if (slash == std::string::npos)
        continue;
      auto topic = stream.substr(0, slash);
      if (std::find(cfg_.topics.begin(), cfg_.topics.end(), topic)
          == cfg_.topics.end())
        continue;
      auto p = std::strtol(stream.c_str() + slash + 1, nullptr, 10);
      if (p >= 0 && p < partitions_)
        return {static_cast<int32_t>(p), true};
    }
  // A key no input record reached (a message's target): by its hash, the
  // same in every member.
  return {static_cast<int32_t>(k.hash() % static_cast<uint64_t>(partitions_)),
          false};
}

caf::error changelog_store::produce(
  const std::vector<std::pair<int32_t, const state_entry*>>& entries,
  bool deletes, std::vector<int64_t>& ends) {
  std::lock_guard<std::mutex> one{produce_mu_};
  batch b;
  b.ends.assign(static_cast<size_t>(partitions_), -1);
  for (const auto& [p, e] : entries) {
    auto kb = key_bytes(e->k);
    rdkafka::headers_ptr hdrs;
    if (e->k.is_integer()) {
      hdrs = rdkafka::new_headers(1);
      rd_kafka_header_add(hdrs.get(), detail::int_key_header, -1, "1", 1);
    }
    {
      std::lock_guard<std::mutex> guard{b.mu};
      ++b.pending;
    }
    for (;;) {
      auto err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_RKT(topic_.get()), RD_KAFKA_V_PARTITION(p),
        RD_KAFKA_V_KEY(kb.data(), kb.size()),
        RD_KAFKA_V_VALUE(deletes ? nullptr : const_cast<char*>(e->bytes.data()),
                         deletes ? 0 : e->bytes.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs.get()), RD_KAFKA_V_OPAQUE(&b),
        RD_KAFKA_V_END);
      if (!err) {
        hdrs.release(); // the message owns them now
        break;
      }
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk_.get(), 10);
        continue;
      }
      {
        std::lock_guard<std::mutex> guard{b.mu};
        --b.pending;
      }
      // The others still point at b.
      rd_kafka_flush(rk_.get(), delivery_timeout_ms);
      return make_error(errc::state_store_failed,
                        "changelog " + cfg_.changelog_topic + ": "
                          + rdkafka::to_string(err));
    }
    if (!deletes) {
      records_written.fetch_add(1, std::memory_order_relaxed);
      bytes_written.fetch_add(e->bytes.size() + kb.size(),
                              std::memory_order_relaxed);
    }
  }
  auto deadline = clock::now() + std::chrono::milliseconds(delivery_timeout_ms
                                                           + 5000);
  for (;;) {
    {
      std::lock_guard<std::mutex> guard{b.mu};
      if (b.pending == 0)
        break;
    }
    if (clock::now() > deadline) {
      // The records may still come; `b` must outlive their reports.
      rd_kafka_purge(rk_.get(),
                     RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      while (rd_kafka_outq_len(rk_.get()) > 0)
        rd_kafka_poll(rk_.get(), 10);
      return make_error(errc::state_store_failed,
                        "changelog " + cfg_.changelog_topic
                          + ": no acknowledgement in time");
    }
    rd_kafka_poll(rk_.get(), 5);
  }
  if (b.err)
    return make_error(errc::state_store_failed,
                      "changelog " + cfg_.changelog_topic + ": "
                        + rdkafka::to_string(b.err));
  ends = std::move(b.ends);
  return caf::none;
}

void changelog_store::advance_markers(const std::vector<int64_t>& ends) {
  bool moved = false;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (size_t p = 0; p < ends.size(); ++p)
      // Only where this member owns the partition: everything before its
      // own records there is already in the local store (restored, or its
      // own), which is what the marker promises.
      if (ends[p] >= 0 && owned_[p] > 0 && markers_[p] >= 0
          && ends[p] + 1 > markers_[p]) {
        markers_[p] = ends[p] + 1;
        moved = true;
      }
  }
  if (moved)
    save_markers();
}

void changelog_store::save_markers() {
  if (marker_path_.empty())
    return;
  std::ostringstream text;
  {
    std::lock_guard<std::mutex> guard{mu_};
    text << cfg_.changelog_topic << ' ' << partitions_ << '\n';
    for (size_t p = 0; p < markers_.size(); ++p)
      text << p << ' ' << markers_[p] << '\n';
  }
  // Written after the local store synced what it names; a marker that is
  // lost or old only makes the next restore read more.
  auto tmp = marker_path_ + ".tmp";
  {
    std::ofstream out{tmp, std::ios::trunc};
    out << text.str();
    if (!out)
      return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, marker_path_, ec);
}

caf::expected<std::optional<std::string>>
changelog_store::read(const key& k) {
  return local_->read(k);
}

caf::error changelog_store::write(const std::vector<state_entry>& entries,
                                  bool sync) {
  std::vector<std::pair<int32_t, const state_entry*>> out;
  std::vector<state_entry> cached;
  out.reserve(entries.size());
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (const auto& e : entries) {
      auto [p, from_input] = partition_of(e.k, e.bytes);
      if (from_input && owned_[static_cast<size_t>(p)] == 0) {
        records_dropped.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      out.emplace_back(p, &e);
    }
  }
  if (out.empty())
    return caf::none;
  std::vector<int64_t> ends;
  if (auto err = produce(out, false, ends))
    return err;
  cached.reserve(out.size());
  for (const auto& [p, e] : out)
    cached.push_back(*e);
  if (auto err = local_->write(cached, sync))
    return err;
  advance_markers(ends);
  return caf::none;
}

caf::expected<bool> changelog_store::erase(const key& k) {
  auto had = local_->read(k);
  if (!had)
    return std::move(had.error());
  if (!*had)
    return false;
  state_entry e{k, {}};
  std::vector<std::pair<int32_t, const state_entry*>> one{
    {partition_of(k, **had).first, &e}};
  std::vector<int64_t> ends;
  if (auto err = produce(one, true, ends))
    return err;
  auto gone = local_->erase(k);
  if (gone)
    advance_markers(ends);
  return gone;
}

caf::error changelog_store::scan(
  const std::function<bool(const key&, std::string_view bytes)>& fn) {
  return local_->scan(fn);
}

std::string changelog_store::describe() const {
  return local_->describe() + " behind changelog topic "
         + cfg_.changelog_topic;
}

namespace {

class shared_store final : public state_store {
public:
  explicit shared_store(std::shared_ptr<changelog_store> s)
    : s_(std::move(s)) {}
  caf::expected<std::optional<std::string>> read(const key& k) override {
    return s_->read(k);
  }
  caf::error write(const std::vector<state_entry>& entries,
                   bool sync) override {
    return s_->write(entries, sync);
  }
  caf::expected<bool> erase(const key& k) override { return s_->erase(k); }
  caf::error
  scan(const std::function<bool(const key&, std::string_view)>& fn) override {
    return s_->scan(fn);
  }
  std::string describe() const override { return s_->describe(); }

private:
  std::shared_ptr<changelog_store> s_;
};

} // namespace

std::unique_ptr<state_store> share(std::shared_ptr<changelog_store> store) {
  return std::make_unique<shared_store>(std::move(store));
}

} // namespace keylane::kafka
