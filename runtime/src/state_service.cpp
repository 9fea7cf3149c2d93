#include "keylane/detail/state_service.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "keylane/detail/logger.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

using steady = std::chrono::steady_clock;

// A store that keeps failing is retried at this pace: often enough to
// recover soon after the disk does, rarely enough not to spin.
constexpr auto retry_pause_max = std::chrono::seconds(1);

} // namespace

caf::expected<std::unique_ptr<state_service>>
state_service::open(const settings& cfg, logger& log) {
  std::unique_ptr<state_store> store;
  switch (cfg.state_store) {
    case state_backend::none:
      break;
    case state_backend::memory:
      store = make_memory_state_store();
      break;
    case state_backend::rocksdb: {
      auto st = open_rocksdb_state_store(cfg.state_path);
      if (!st)
        return std::move(st.error());
      store = std::move(*st);
      break;
    }
  }
  return std::unique_ptr<state_service>{
    new state_service(std::move(store), log)};
}

state_service::state_service(std::unique_ptr<state_store> store, logger& log)
  : store_(std::move(store)), log_(log), last_write_(steady::now()) {
  if (store_)
    writer_ = std::thread{[this] { run(); }};
}

state_service::~state_service() {
  close(std::chrono::seconds(0));
}

caf::expected<std::optional<std::string>>
state_service::load(const key& k) {
  if (!store_)
    return std::optional<std::string>{};
  auto t0 = steady::now();
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = staged_.find(k); i != staged_.end()) {
      std::optional<std::string> out{i->second.bytes};
      count_load(steady::now() - t0);
      return out;
    }
  }
  auto got = store_->read(k);
  count_load(steady::now() - t0);
  if (!got)
    load_failures_.fetch_add(1, std::memory_order_relaxed);
  return got;
}

void state_service::count_load(std::chrono::nanoseconds d) noexcept {
  loads_.fetch_add(1, std::memory_order_relaxed);
  auto us = static_cast<uint64_t>(std::max<int64_t>(0, d.count()) / 1000);
  size_t i = 0;
  while (i < latency_histogram::bounds_us.size()
         && us > latency_histogram::bounds_us[i])
    ++i;
  load_counts_[i].fetch_add(1, std::memory_order_relaxed);
  load_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, d.count())),
                     std::memory_order_relaxed);
}

void state_service::stage(state_round r) {
  if (!store_ || r.empty())
    return;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& w : r.writes)
      staged_[w.k] = staged{w.bytes, ++gen_};
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
    staged_[w.k] = staged{w.bytes, ++gen_};
  queue_.push_back(std::move(r));
  auto mine = ++enqueued_;
  cv_.notify_all();
  // The event path asked to wait for the disk: it waits while the store
  // fails (the writer retries), unless the runtime is stopping meanwhile.
  cv_.wait(lk, [&] { return written_ >= mine || (interrupted_ && failing_); });
  if (written_ >= mine)
    return {};
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
    std::vector<state_round> rounds{std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end())};
    queue_.clear();
    busy_ = true;
    lk.unlock();
    auto ok = write_batch(rounds);
    lk.lock();
    busy_ = false;
    failing_ = !ok;
    if (!ok) {
      // Put them back in front, in order, for the next try.
      for (auto i = rounds.rbegin(); i != rounds.rend(); ++i)
        queue_.push_front(std::move(*i));
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

bool state_service::write_batch(std::vector<state_round>& rounds) {
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
  std::vector<std::pair<key, uint64_t>> gens;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    gens.reserve(entries.size());
    for (auto& e : entries)
      if (auto i = staged_.find(e.k); i != staged_.end())
        gens.emplace_back(e.k, i->second.gen);
  }
  if (!entries.empty()) {
    if (auto err = store_->write(entries, true)) {
      if (write_failures_.fetch_add(1, std::memory_order_relaxed) == 0
          || log_.enabled(log_level::debug))
        log_.write(log_level::error,
                   "state: writing " + std::to_string(entries.size())
                     + " keys failed (retrying until it works; loads see "
                       "the unwritten state meanwhile): "
                     + render(err));
      return false;
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
    for (auto& [k, gen] : gens)
      if (auto i = staged_.find(k); i != staged_.end() && i->second.gen == gen)
        staged_.erase(i);
    last_write_ = steady::now();
  }
  for (auto& r : rounds)
    report(r.seqs);
  return true;
}

bool state_service::flush(std::chrono::nanoseconds timeout) {
  if (!store_)
    return true;
  std::unique_lock<std::mutex> lk{mtx_};
  auto target = enqueued_;
  return cv_.wait_for(lk, timeout, [&] { return written_ >= target; });
}

void state_service::close(std::chrono::nanoseconds timeout) {
  if (!writer_.joinable())
    return;
  auto done = flush(timeout);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
    if (!done && !staged_.empty())
      log_.write(log_level::error,
                 "state: " + std::to_string(staged_.size())
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
  c.pending = staged_.size();
  if (!staged_.empty() || !queue_.empty() || busy_)
    c.checkpoint_age = steady::now() - last_write_;
  return c;
}

} // namespace keylane::detail
