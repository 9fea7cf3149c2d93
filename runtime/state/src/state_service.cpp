// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/state_service.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "keylane/detail/state_components.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

using steady = std::chrono::steady_clock;

// A store that keeps failing is retried at this pace: often enough to
// recover soon after the disk does, rarely enough not to spin.
constexpr auto retry_pause_max = std::chrono::seconds(1);

// Staged records that make the writer go before its interval is up: a
// bound on what waits in memory, and on one batch.
constexpr size_t max_queued_writes = 1 << 16;

} // namespace

caf::expected<std::unique_ptr<state_service>>
state_service::open(const settings& cfg, logger& log) {
  std::unique_ptr<state_store> store;
  if (cfg.state_store_open && cfg.state_store != state_backend::none) {
    auto st = cfg.state_store_open();
    if (!st)
      return std::move(st.error());
    store = std::move(*st);
    return std::unique_ptr<state_service>{
      new state_service(std::move(store), cfg, log)};
  }
  switch (cfg.state_store) {
    case state_backend::none:
      break;
    case state_backend::memory:
      store = make_memory_state_store();
      break;
    case state_backend::rocksdb: {
      if (!detail::component_open_rocksdb_state_store)
        return make_error(
          errc::invalid_config,
          "state.store = \"rocksdb\" needs keylane's RocksDB state store, "
          "which this program does not link: link keylane::state "
          "(find_package(keylane COMPONENTS state)), built when "
          "KEYLANE_BUILD_STATE is on");
      // A point-in-time recovery's warning goes to the runtime's log; the
      // writer is called only during the open.
      auto st = detail::component_open_rocksdb_state_store(
        cfg.state_path, cfg.state_recover,
        [&log](log_level level, std::string_view line) {
          log.write(level, line);
        });
      if (!st)
        return std::move(st.error());
      store = std::move(*st);
      break;
    }
  }
  return std::unique_ptr<state_service>{
    new state_service(std::move(store), cfg, log)};
}

state_service::state_service(std::unique_ptr<state_store> store,
                             const settings& cfg, logger& log)
  : store_(std::move(store)),
    log_(log),
    // The memory store is a map already: a second copy would buy nothing.
    cache_limit_(cfg.state_store == state_backend::rocksdb
                     && !cfg.state_store_open
                   ? cfg.state_cache_bytes : 0),
    pace_(std::chrono::milliseconds(cfg.state_checkpoint_ms)),
    next_write_(steady::now()),
    last_write_(steady::now()) {
  if (store_)
    writer_ = std::thread{[this] { run(); }};
}

state_service::~state_service() {
  close(std::chrono::seconds(0));
}

void state_service::stage(state_round r) {
  if (!store_ || r.empty())
    return;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& w : r.writes)
      put(w.k, w.bytes, false);
    queued_writes_ += r.writes.size();
    queue_.push_back(std::move(r));
    ++enqueued_;
  }
  cv_.notify_all();
}

caf::error state_service::write_now(state_round r) {
  if (!store_ || r.empty())
    return {};
  // Through the writer, so a key's records reach the store in the order
  // they were taken whichever way they came; concurrent shards share its
  // batches (and fsyncs).
  std::unique_lock<std::mutex> lk{mtx_};
  for (auto& w : r.writes)
    put(w.k, w.bytes, false);
  queued_writes_ += r.writes.size();
  auto seqs = r.seqs; // the round's name in the queue, if it must leave it
  queue_.push_back(std::move(r));
  auto mine = ++enqueued_;
  urgent_ = true;
  cv_.notify_all();
  // The event path asked to wait for the disk: it waits while the store
  // fails (the writer retries), unless the runtime is stopping meanwhile.
  // Not while a write is under way: it may hold this round, and succeed.
  cv_.wait(lk, [&] {
    return written_ >= mine || (interrupted_ && failing_ && !busy_);
  });
  if (written_ >= mine)
    return {};
  // Given up: the round's events are not delivered (the caller withholds
  // them and stop lists them), so no later try may write their changes.
  // It stays in the queue, emptied, so that the count of rounds written
  // still names the rounds before it; its keys stay unwritten in the cache,
  // which `close` reports.
  if (!seqs.empty())
    for (auto& q : queue_)
      if (q.seqs == seqs) {
        queued_writes_ -= q.writes.size();
        q = state_round{};
        break;
      }
  return make_error(errc::state_store_failed,
                    "state not written to " + store_->describe()
                      + ": the store refuses writes and the runtime is "
                        "stopping");
}

void state_service::interrupt() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    interrupted_ = true;
  }
  cv_.notify_all();
}

void state_service::on_durable(durable_fn fn) {
  std::lock_guard<std::mutex> guard{durable_mtx_};
  durable_ = std::move(fn);
}

void state_service::on_messages(messages_fn fn) {
  std::lock_guard<std::mutex> guard{durable_mtx_};
  messages_ = std::move(fn);
}

void state_service::report(const std::vector<uint64_t>& seqs) {
  if (seqs.empty())
    return;
  std::lock_guard<std::mutex> guard{durable_mtx_};
  if (durable_)
    durable_(seqs);
}

void state_service::run() {
  std::unique_lock<std::mutex> lk{mtx_};
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, and everything is written
    // One write per checkpoint interval: what retires stage in between
    // waits for it (loads see it meanwhile), and a key staged twice is
    // written once.
    cv_.wait_until(lk, next_write_, [&] {
      return stopping_ || urgent_ || queued_writes_ >= max_queued_writes;
    });
    urgent_ = false;
    queued_writes_ = 0;
    std::vector<state_round> rounds{std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end())};
    queue_.clear();
    // Each key's newest record now is the newest of these rounds: anything
    // staged after this goes to the next batch (with a newer generation),
    // and must not be marked written by this one.
    std::vector<std::pair<key, uint64_t>> gens;
    for (auto& r : rounds)
      for (auto& w : r.writes)
        if (auto i = cache_.find(w.k); i != cache_.end() && !i->second.written)
          gens.emplace_back(w.k, i->second.gen);
    busy_ = true;
    next_write_ = steady::now() + pace_;
    lk.unlock();
    auto ok = write_batch(rounds, gens);
    lk.lock();
    busy_ = false;
    failing_ = !ok;
    if (!ok) {
      // Put them back in front, in order, for the next try.
      for (auto i = rounds.rbegin(); i != rounds.rend(); ++i) {
        queued_writes_ += i->writes.size();
        queue_.push_front(std::move(*i));
      }
      cv_.notify_all(); // write_now callers see the failure
      if (stopping_)
        return; // close gave up waiting: what is staged is lost
      cv_.wait_for(lk, retry_pause_max, [&] { return stopping_; });
      continue;
    }
    written_ += rounds.size();
    cv_.notify_all();
  }
}

bool state_service::write_batch(
  std::vector<state_round>& rounds,
  const std::vector<std::pair<key, uint64_t>>& gens) {
  // One record per key: the last one taken.
  std::vector<state_entry> entries;
  std::unordered_map<key, size_t, key_hasher> at;
  for (auto& r : rounds)
    for (auto& w : r.writes) {
      auto [i, fresh] = at.emplace(w.k, entries.size());
      if (fresh)
        entries.push_back(w);
      else
        entries[i->second].bytes = w.bytes;
    }
  if (!entries.empty()) {
    if (auto err = store_->write(entries, true)) {
      write_failures_.fetch_add(1, std::memory_order_relaxed);
      // One line when a streak starts (every try at debug level).
      if (streak_tries_++ == 0) {
        streak_start_ = steady::now();
        log_.write(log_level::error,
                   "state: writing " + std::to_string(entries.size())
                     + " keys failed: " + render(err)
                     + "; retrying every second until it works (nothing is "
                       "reported durable meanwhile; loads see the unwritten "
                       "state)");
      } else if (log_.enabled(log_level::debug)) {
        log_.write(log_level::debug,
                   "state: writing " + std::to_string(entries.size())
                     + " keys failed again (try "
                     + std::to_string(streak_tries_) + "): " + render(err));
      }
      return false;
    }
    if (streak_tries_ != 0) {
      auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        steady::now() - streak_start_);
      log_.write(log_level::warning,
                 "state: writes to " + store_->describe()
                   + " work again after " + std::to_string(streak_tries_)
                   + " failed tries in "
                   + std::to_string(took.count() / 1000) + "."
                   + std::to_string(took.count() % 1000 / 100) + " s; "
                   + std::to_string(entries.size()) + " keys written");
      streak_tries_ = 0;
    }
    uint64_t bytes = 0;
    for (auto& e : entries)
      bytes += e.bytes.size();
    writes_.fetch_add(entries.size(), std::memory_order_relaxed);
    write_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    checkpoints_.fetch_add(1, std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& [k, gen] : gens) {
      auto i = cache_.find(k);
      if (i == cache_.end() || i->second.gen != gen || i->second.written)
        continue; // staged again meanwhile: the newer one waits its turn
      i->second.written = true;
      --unwritten_;
      written_order_.emplace_back(k, gen);
    }
    evict();
    last_write_ = steady::now();
  }
  for (auto& r : rounds) {
    report(r.seqs);
    if (!r.sends.empty() || !r.delivered.empty()) {
      std::lock_guard<std::mutex> guard{durable_mtx_};
      if (messages_)
        messages_(r.sends, r.delivered);
    }
  }
  return true;
}

bool state_service::flush(std::chrono::nanoseconds timeout) {
  if (!store_)
    return true;
  std::unique_lock<std::mutex> lk{mtx_};
  auto target = enqueued_;
  urgent_ = true;
  cv_.notify_all();
  return cv_.wait_for(lk, timeout, [&] { return written_ >= target; });
}

void state_service::close(std::chrono::nanoseconds timeout) {
  if (!writer_.joinable())
    return;
  auto done = flush(timeout);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
    if (!done && unwritten_ != 0)
      log_.write(log_level::error,
                 "state: " + std::to_string(unwritten_)
                   + " keys' state could not be written to "
                   + store_->describe() + " before stop; they resume from "
                   + "their last written state");
  }
  cv_.notify_all();
  writer_.join();
}

state_counters state_service::counters() const {
  state_counters c;
  auto r = std::memory_order_relaxed;
  c.loads = loads_.load(r);
  c.load_failures = load_failures_.load(r);
  c.writes = writes_.load(r);
  c.write_bytes = write_bytes_.load(r);
  c.checkpoints = checkpoints_.load(r);
  c.write_failures = write_failures_.load(r);
  uint64_t n = 0;
  for (size_t i = 0; i < load_counts_.size(); ++i) {
    c.load_latency.counts[i] = load_counts_[i].load(r);
    n += c.load_latency.counts[i];
  }
  c.load_latency.count = n;
  c.load_latency.sum = std::chrono::nanoseconds{
    static_cast<int64_t>(load_ns_.load(r))};
  std::lock_guard<std::mutex> guard{mtx_};
  c.pending = unwritten_;
  if (unwritten_ != 0 || !queue_.empty() || busy_)
    c.checkpoint_age = steady::now() - last_write_;
  return c;
}

} // namespace keylane::detail
