// SPDX-License-Identifier: Apache-2.0
// Baseline 3: key -> fixed partition by hash, one moodycamel queue and one
// worker thread per partition, as many partitions as --threads (2 by
// default, one per core of the reference machine). Keeps per-key order (one producer token,
// one consumer per queue), but a hot key stalls every key that shares its
// partition.

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <keylane/detail/mpmc_queue.hpp>
#include <keylane/key.hpp>

#include "../way.hpp"

namespace keylane::bench {

namespace {

constexpr size_t batch = 64;

class hash_partitions final : public way {
public:
  explicit hash_partitions(int partitions) {
    for (int i = 0; i < partitions; ++i)
      parts_.push_back(std::make_unique<partition>());
  }

  std::string start(output& out, uint64_t work_iters) override {
    for (auto& p : parts_)
      p->worker = std::thread{[this, q = &p->queue, &out, work_iters] {
        item buf[batch];
        for (;;) {
          auto n = q->wait_dequeue_bulk_timed(buf, batch, 2000);
          if (n == 0 && done_.load(std::memory_order_acquire))
            return;
          for (size_t j = 0; j < n; ++j)
            out.deliver(buf[j], do_work(buf[j], work_iters));
        }
      }};
    return {};
  }

  bool submit(const item& it) override {
    auto& p = *parts_[stable_hash(it.key) % parts_.size()];
    return p.queue.enqueue(p.token, it);
  }

  std::string stop() override {
    done_.store(true, std::memory_order_release);
    for (auto& p : parts_)
      p->worker.join();
    return {};
  }

private:
  struct partition {
    detail::blocking_mpmc_queue<item> queue;
    detail::producer_token token{queue};
    std::thread worker;
  };
  std::vector<std::unique_ptr<partition>> parts_;
  std::atomic<bool> done_{false};
};

} // namespace

std::unique_ptr<way> make_hash_partitions(int threads) {
  return std::make_unique<hash_partitions>(threads);
}

} // namespace keylane::bench
