// SPDX-License-Identifier: Apache-2.0
// Baseline 6 (on request): hash_partitions plus global re-sequencing, with
// no keylane code — the least a pipeline pays for what keylane_global
// promises (per-key order in processing, outputs in submission order,
// a bounded window between submit and output). Each worker writes its
// results into a ring indexed by sequence number; whichever worker finds
// the ring's head ready delivers the run that follows it (no sequencer
// thread, no wake-up for re-sequencing). The producer blocks while the
// window is full, as keylane's `overflow = block` does.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <keylane/detail/mpmc_queue.hpp>
#include <keylane/key.hpp>

#include "../way.hpp"

namespace keylane::bench {

namespace {

constexpr size_t partitions = 2; // as hash_partitions
constexpr size_t batch = 64;
constexpr uint64_t window = 65536; // keylane ways' runtime.window

struct sequenced {
  item it;
  uint64_t seq = 0;
};

class ordered_partitions final : public way {
public:
  ordered_partitions() : ring_(new cell[window]) {
    for (size_t i = 0; i < partitions; ++i)
      parts_.push_back(std::make_unique<partition>());
  }

  std::string start(output& out, uint64_t work_iters) override {
    out_ = &out;
    for (auto& p : parts_)
      p->worker = std::thread{[this, q = &p->queue, work_iters] {
        sequenced buf[batch];
        for (;;) {
          auto n = q->wait_dequeue_bulk_timed(buf, batch, 2000);
          if (n == 0 && done_.load(std::memory_order_acquire))
            return;
          for (size_t j = 0; j < n; ++j) {
            auto& c = ring_[buf[j].seq % window];
            c.it = buf[j].it;
            c.seq = buf[j].seq;
            c.result = do_work(buf[j].it, work_iters);
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
    auto& p = *parts_[stable_hash(it.key) % partitions];
    return p.queue.enqueue(p.token, sequenced{it, next_++});
  }

  std::string stop() override {
    done_.store(true, std::memory_order_release);
    for (auto& p : parts_)
      p->worker.join();
    if (out_of_order_ != 0)
      return "ordered_partitions: " + std::to_string(out_of_order_)
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

  struct partition {
    detail::blocking_mpmc_queue<sequenced> queue;
    detail::producer_token token{queue};
    std::thread worker;
  };
  std::vector<std::unique_ptr<partition>> parts_;
  std::unique_ptr<cell[]> ring_;
  output* out_ = nullptr;
  uint64_t next_ = 0; // producer only
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<bool> draining_{false};
  alignas(64) std::atomic<bool> blocked_{false};
  std::mutex mtx_;
  std::condition_variable cv_;
  uint64_t out_of_order_ = 0; // drainer only
  std::atomic<bool> done_{false};
};

} // namespace

std::unique_ptr<way> make_ordered_partitions() {
  return std::make_unique<ordered_partitions>();
}

} // namespace keylane::bench
