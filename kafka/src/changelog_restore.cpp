// SPDX-License-Identifier: Apache-2.0
// Restores of one changelog partition into the local store.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

#include "changelog_store.hpp"
#include "keylane/errc.hpp"

namespace keylane::kafka {

namespace {

using clock = std::chrono::steady_clock;

// Restored records written to the local store per batch.
constexpr size_t restore_batch = 4096;

} // namespace

caf::error changelog_store::open_reader() {
  // One reader for every restore: a consumer's start (its connections)
  // would cost more than an empty partition's restore.
  auto conf = rdkafka::new_conf();
  for (const auto& [k, v] : std::map<std::string, std::string>{
         {"bootstrap.servers", cfg_.bootstrap_servers},
         {"group.id", cfg_.group + ".keylane-restore"},
         {"enable.auto.commit", "false"},
         {"isolation.level", "read_committed"},
         {"enable.partition.eof", "true"},
         // A restore waits for its first fetch; a long poll still out for
         // the previous restore's partition would hold it up to this.
         {"fetch.wait.max.ms", "20"},
         {"log_level", cfg_.properties.count("log_level")
                         ? cfg_.properties.at("log_level") : "6"}})
    if (auto err = rdkafka::set(*conf, k, v, cfg_.origin, "changelog"))
      return err;
  auto rk = rdkafka::new_client(RD_KAFKA_CONSUMER, std::move(conf),
                                "kafka changelog reader");
  if (!rk)
    return std::move(rk.error());
  reader_ = std::move(*rk);
  return caf::none;
}

caf::expected<restore_report> changelog_store::restore(int32_t partition) {
  std::lock_guard<std::mutex> one{restore_mu_};
  restore_report rep;
  auto t0 = clock::now();
  int64_t from;
  {
    std::lock_guard<std::mutex> guard{mu_};
    from = markers_[static_cast<size_t>(partition)];
  }
  if (!reader_)
    if (auto err = open_reader())
      return err;
  auto* rk = reader_.get();
  // Called with no message of the reader left: they must go before it.
  auto fail = [&](std::string why) {
    // The next try starts from a fresh reader: nothing of this one's
    // fetch state can stall it again.
    reader_.reset();
    return make_error(errc::state_store_failed,
                      "restoring " + cfg_.changelog_topic + '/'
                        + std::to_string(partition) + ": " + why);
  };
  int64_t lo = 0, hi = 0;
  if (auto err = rd_kafka_query_watermark_offsets(
        rk, cfg_.changelog_topic.c_str(), partition, &lo, &hi, 10000))
    return fail(rdkafka::to_string(err));
  // A marker past the end is of a topic made again: read all of it.
  if (from < lo || from > hi)
    from = lo;
  if (from < hi) {
    auto l = rdkafka::new_list(1);
    rdkafka::add(*l, cfg_.changelog_topic, partition).offset = from;
    auto aerr = rd_kafka_assign(rk, l.get());
    if (aerr)
      return fail(rdkafka::to_string(aerr));
    std::vector<state_entry> puts;
    auto flush = [&](bool sync) -> caf::error {
      if (puts.empty() && !sync)
        return caf::none;
      if (auto err = local_->write(puts, sync))
        return err;
      puts.clear();
      return caf::none;
    };
    int64_t next = from;
    auto idle_until = clock::now() + std::chrono::seconds(30);
    while (next < hi) {
      auto m = rdkafka::consumer_poll(rk, 100);
      if (!m) {
        if (clock::now() > idle_until)
          return fail("no records for 30 s at offset " + std::to_string(next)
                      + " of " + std::to_string(hi));
        continue;
      }
      if (m->rkt
          && (m->partition != partition
              || cfg_.changelog_topic != rd_kafka_topic_name(m->rkt))) {
        continue; // left from an earlier restore
      }
      idle_until = clock::now() + std::chrono::seconds(30);
      if (m->err) {
        auto e = m->err;
        if (e == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          next = std::max(next, m->offset);
          continue;
        }
        auto why = std::string{rd_kafka_message_errstr(m.get())};
        m.reset(); // before `fail` destroys the reader
        return fail(why);
      }
      next = m->offset + 1;
      std::string kb{static_cast<const char*>(m->key), m->key_len};
      rd_kafka_headers_t* hdrs = nullptr;
      const void* v = nullptr;
      size_t vs = 0;
      bool int_key =
        rd_kafka_message_headers(m.get(), &hdrs) == 0
        && rd_kafka_header_get_last(hdrs, detail::int_key_header, &v, &vs)
             == 0;
      key k = int_key ? key{static_cast<uint64_t>(
                          std::strtoull(kb.c_str(), nullptr, 10))}
                      : key{std::move(kb)};
      if (!m->payload) {
        // A delete: what is staged before it goes first.
        if (auto err = flush(false)) {
          m.reset();
          rd_kafka_assign(rk, nullptr);
          return err;
        }
        auto gone = local_->erase(k);
        (void) gone;
      } else {
        rep.bytes += m->len + m->key_len;
        puts.push_back(state_entry{
          std::move(k),
          std::string{static_cast<const char*>(m->payload), m->len}});
      }
      ++rep.records;
      m.reset();
      if (puts.size() >= restore_batch)
        if (auto err = flush(false)) {
          rd_kafka_assign(rk, nullptr);
          return err;
        }
    }
    if (auto err = flush(true)) {
      rd_kafka_assign(rk, nullptr);
      return err;
    }
  }
  rd_kafka_assign(rk, nullptr);
  {
    std::lock_guard<std::mutex> guard{mu_};
    markers_[static_cast<size_t>(partition)] = hi;
  }
  save_markers();
  rep.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return rep;
}

} // namespace keylane::kafka
