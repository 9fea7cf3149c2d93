// SPDX-License-Identifier: Apache-2.0
// Baseline 2: one moodycamel queue, consumer threads (--threads, 2 by
// default) taking whatever comes next. Fast, but a key's events can run at
// once on two threads and finish out of order: an upper bound that breaks
// per-key order.

#include <atomic>
#include <thread>
#include <vector>

#include <keylane/detail/mpmc_queue.hpp>

#include "../way.hpp"

namespace keylane::bench {

namespace {

constexpr size_t batch = 64;

class shared_queue final : public way {
public:
  explicit shared_queue(int consumers) : consumers_(consumers) {}

  std::string start(output& out, uint64_t work_iters) override {
    for (int i = 0; i < consumers_; ++i)
      threads_.emplace_back([this, &out, work_iters] {
        item buf[batch];
        for (;;) {
          auto n = queue_.wait_dequeue_bulk_timed(buf, batch, 2000);
          if (n == 0 && done_.load(std::memory_order_acquire))
            return;
          for (size_t j = 0; j < n; ++j)
            out.deliver(buf[j], do_work(buf[j], work_iters));
        }
      });
    return {};
  }

  bool submit(const item& it) override { return queue_.enqueue(token_, it); }

  std::string stop() override {
    done_.store(true, std::memory_order_release);
    for (auto& t : threads_)
      t.join();
    return {};
  }

private:
  int consumers_;
  detail::blocking_mpmc_queue<item> queue_;
  detail::producer_token token_{queue_};
  std::atomic<bool> done_{false};
  std::vector<std::thread> threads_;
};

} // namespace

std::unique_ptr<way> make_shared_queue(int threads) {
  return std::make_unique<shared_queue>(threads);
}

} // namespace keylane::bench
