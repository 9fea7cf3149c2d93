// SPDX-License-Identifier: Apache-2.0
// Baseline 6 (on request): hash_partitions plus global re-sequencing, with
// no keylane code — the least a pipeline pays for what keylane_global
// promises (per-key order in processing, outputs in submission order,
// a bounded window between submit and output). Each worker writes its
// results into a ring indexed by sequence number; whichever worker finds
// the ring's head ready delivers the run that follows it (no sequencer
// thread, no wake-up for re-sequencing). The producer blocks while the
// window is full, as keylane's `overflow = block` does.
//
// Baseline 7 (on request), keyed_partitions: the same plus the per-key
// state any keyed runtime keeps, still with no keylane code — on submit,
// the key's count of unfinished events in a table striped by the key's
// hash under a lock per stripe (what bounds a key's backlog; never full
// here); on the worker, the key's handler object, found in the
// partition's table or made on the key's first event, called through a
// virtual function, and the count given back under the stripe lock after
// the event ran. No cap of live keys, no retire: what a keyed runtime
// whose keys' state stays live (keylane with `--set
// runtime.max_active_keys` above the key count) pays in this plain layout.
//
// Baseline 8 (on request), keyed_slots: keyed_partitions in the tightest
// layout we know — the key is looked up once, on submit, in the striped
// table, which holds a fixed-address entry per key (its count and its
// handler); the event carries the entry to the worker, which calls the
// handler with no lookup and gives the count back with one atomic
// decrement, no lock; a key with nothing unfinished is placed on the
// partition with less queued, as keylane places a starting lane. What
// per-key state costs when nothing is looked up twice.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <tsl/robin_map.h>

#include <keylane/detail/mpmc_queue.hpp>
#include <keylane/key.hpp>

#include "../way.hpp"
#include "striped_entries.hpp"

namespace keylane::bench {

namespace {

constexpr size_t batch = 64;
constexpr uint64_t window = 65536; // keylane ways' runtime.window

struct key_entry;

struct sequenced {
  item it;
  uint64_t seq = 0;
  key_entry* entry = nullptr; // keyed_slots only
};

enum class keying { none, counts, slots };

// A key's handler, as a user writes one: virtual, one object per key.
struct key_handler {
  virtual ~key_handler() = default;
  virtual uint64_t on_event(const item& it, uint64_t iters) = 0;
};

struct spin_key_handler final : key_handler {
  uint64_t on_event(const item& it, uint64_t iters) override {
    ++events; // the key's state, which a real handler's event changes
    return do_work(it, iters);
  }
  uint64_t events = 0;
};

// The keys' counts of unfinished events, striped as keylane's backlog.
class key_counts {
public:
  void add(const key& k) {
    auto& s = stripes_[k.hash() >> 58];
    std::lock_guard<std::mutex> guard{s.mtx};
    ++s.counts[k];
  }
  void release(const key& k) {
    auto& s = stripes_[k.hash() >> 58];
    std::lock_guard<std::mutex> guard{s.mtx};
    --s.counts.find(k).value();
  }

private:
  struct alignas(64) stripe {
    std::mutex mtx;
    tsl::robin_map<key, uint64_t, key_hasher, std::equal_to<key>,
                   std::allocator<std::pair<key, uint64_t>>, true>
      counts;
  };
  stripe stripes_[64];
};

// keyed_slots: a key's count and handler at one fixed address. The
// handler is touched only by the worker of the key's partition.
struct key_entry {
  std::atomic<uint64_t> unfinished{0};
  size_t partition = 0; // producer only
  uint64_t last_seq = 0;  // worker of the key's partition, as the handler
  std::unique_ptr<key_handler> handler;
};

// Says whether the key was idle (every earlier event given back), so
// that the caller may place it anew.
using key_slots = striped_entries<key, key_entry, key_hasher>;

class ordered_partitions final : public way {
public:
  // As hash_partitions: one worker thread per partition.
  ordered_partitions(keying mode, int partitions)
    : ring_(new cell[window]), mode_(mode) {
    for (int i = 0; i < partitions; ++i)
      parts_.push_back(std::make_unique<partition>());
  }

  std::string start(output& out, uint64_t work_iters) override {
    out_ = &out;
    for (auto& p : parts_)
      p->worker = std::thread{[this, p = p.get(), q = &p->queue, work_iters] {
        sequenced buf[batch];
        for (;;) {
          auto n = q->wait_dequeue_bulk_timed(buf, batch, 2000);
          if (n == 0 && done_.load(std::memory_order_acquire))
            return;
          for (size_t j = 0; j < n; ++j) {
            auto& c = ring_[buf[j].seq % window];
            c.it = buf[j].it;
            c.seq = buf[j].seq;
            c.result = run(*p, buf[j], work_iters);
            c.ready.store(true, std::memory_order_seq_cst);
          }
          if (n != 0)
            drain();
        }
      }};
    return {};
  }

  bool submit(const item& it) override {
    if (next_ - head_.load(std::memory_order_acquire) >= window) {
      std::unique_lock<std::mutex> guard{mtx_};
      blocked_.store(true, std::memory_order_seq_cst);
      cv_.wait(guard, [&] {
        return next_ - head_.load(std::memory_order_seq_cst) < window / 2;
      });
      blocked_.store(false, std::memory_order_relaxed);
    }
    auto* p = parts_[stable_hash(it.key) % parts_.size()].get();
    key_entry* e = nullptr;
    if (mode_ == keying::counts) {
      counts_.add(key{it.key});
    } else if (mode_ == keying::slots) {
      // An idle key goes to the partition with less queued, as keylane
      // places a starting lane by load; a busy one stays where its events
      // are, which keeps them in order.
      bool idle = false;
      e = slots_.add(key{it.key}, idle);
      if (idle)
        e->partition = least_queued();
      p = parts_[e->partition].get();
    }
    return p->queue.enqueue(p->token, sequenced{it, next_++, e});
  }

  std::string stop() override {
    done_.store(true, std::memory_order_release);
    for (auto& p : parts_)
      p->worker.join();
    if (auto n = misordered_.load(); n != 0)
      return name() + ": " + std::to_string(n)
             + " events ran before an earlier event of their key";
    if (out_of_order_ != 0)
      return name() + ": "
             + std::to_string(out_of_order_)
             + " outputs left out of submission order";
    return {};
  }

private:
  struct alignas(64) cell {
    std::atomic<bool> ready{false};
    item it;
    uint64_t seq = 0;
    uint64_t result = 0;
  };

  // One drainer at a time delivers the ready run at the head. A worker
  // that finds another draining leaves its results to it: the drainer
  // looks at the head once more after letting go, so none is stranded.
  void drain() {
    for (;;) {
      if (draining_.exchange(true, std::memory_order_seq_cst))
        return;
      auto h = head_.load(std::memory_order_relaxed);
      auto start = h;
      for (;;) {
        auto& c = ring_[h % window];
        if (!c.ready.load(std::memory_order_acquire))
          break;
        if (c.seq == h) {
          out_->deliver(c.it, c.result);
        } else { // overwritten before it was delivered: fails the run
          ++out_of_order_;
          out_->note_failure();
        }
        c.ready.store(false, std::memory_order_relaxed);
        ++h;
      }
      head_.store(h, std::memory_order_seq_cst);
      draining_.store(false, std::memory_order_seq_cst);
      if (h != start && blocked_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> guard{mtx_};
        cv_.notify_one();
      }
      if (!ring_[h % window].ready.load(std::memory_order_seq_cst))
        return;
    }
  }

  // The partition with the least queued (the first of equals).
  size_t least_queued() const {
    size_t best = 0;
    auto least = parts_[0]->queue.size_approx();
    for (size_t i = 1; i < parts_.size(); ++i)
      if (auto n = parts_[i]->queue.size_approx(); n < least) {
        least = n;
        best = i;
      }
    return best;
  }

  struct partition {
    detail::blocking_mpmc_queue<sequenced> queue;
    detail::producer_token token{queue};
    std::thread worker;
    tsl::robin_map<key, std::unique_ptr<key_handler>, key_hasher> handlers;
  };

  std::string name() const {
    switch (mode_) {
    case keying::counts:
      return "keyed_partitions";
    case keying::slots:
      return "keyed_slots";
    default:
      return "ordered_partitions";
    }
  }

  uint64_t run(partition& p, const sequenced& s, uint64_t iters) {
    if (mode_ == keying::counts)
      return run_keyed(p, s.it, iters);
    if (mode_ == keying::none)
      return do_work(s.it, iters);
    auto& h = s.entry->handler;
    if (!h)
      h = std::make_unique<spin_key_handler>();
    else if (s.seq < s.entry->last_seq) { // a move broke the key's order
      misordered_.fetch_add(1, std::memory_order_relaxed);
      out_->note_failure();
    }
    s.entry->last_seq = s.seq;
    auto r = h->on_event(s.it, iters);
    s.entry->unfinished.fetch_sub(1, std::memory_order_release);
    return r;
  }

  uint64_t run_keyed(partition& p, const item& it, uint64_t iters) {
    key k{it.key};
    auto& h = p.handlers[k];
    if (!h)
      h = std::make_unique<spin_key_handler>();
    auto r = h->on_event(it, iters);
    counts_.release(k);
    return r;
  }
  std::vector<std::unique_ptr<partition>> parts_;
  std::unique_ptr<cell[]> ring_;
  keying mode_;
  key_counts counts_; // keyed_partitions only
  key_slots slots_;   // keyed_slots only
  output* out_ = nullptr;
  uint64_t next_ = 0; // producer only
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<bool> draining_{false};
  alignas(64) std::atomic<bool> blocked_{false};
  std::mutex mtx_;
  std::condition_variable cv_;
  uint64_t out_of_order_ = 0; // drainer only
  std::atomic<uint64_t> misordered_{0};
  std::atomic<bool> done_{false};
};

} // namespace

std::unique_ptr<way> make_ordered_partitions(int threads) {
  return std::make_unique<ordered_partitions>(keying::none, threads);
}

std::unique_ptr<way> make_keyed_partitions(int threads) {
  return std::make_unique<ordered_partitions>(keying::counts, threads);
}

std::unique_ptr<way> make_keyed_slots(int threads) {
  return std::make_unique<ordered_partitions>(keying::slots, threads);
}

} // namespace keylane::bench
