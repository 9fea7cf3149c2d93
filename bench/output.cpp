// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace keylane::bench {

namespace {

std::atomic<uint64_t> next_epoch{1};

// The slot this thread writes in the output of epoch `epoch`: epochs are
// never reused, so a stale entry from an earlier output cannot match.
struct thread_slot {
  uint64_t epoch = 0;
  void* slot = nullptr;
};
thread_local thread_slot current;

} // namespace

output::output(uint64_t key_space, bool record_latency, int max_threads)
  : epoch_(next_epoch.fetch_add(1)),
    record_latency_(record_latency),
    max_threads_(max_threads),
    next_(new std::atomic<uint32_t>[key_space]()),
    slots_(new slot[static_cast<size_t>(max_threads)]) {
  if (record_latency_)
    for (int i = 0; i < max_threads_; ++i)
      slots_[i].latency = std::make_unique<common::latency_histogram>();
}

output::~output() = default;

output::slot& output::my_slot() noexcept {
  if (current.epoch == epoch_)
    return *static_cast<slot*>(current.slot);
  return claim_slot();
}

output::slot& output::claim_slot() noexcept {
  int i = used_slots_.fetch_add(1);
  if (i >= max_threads_) {
    std::fprintf(stderr, "keylane_bench: more than %d delivering threads\n",
                 max_threads_);
    std::abort();
  }
  current = thread_slot{epoch_, &slots_[i]};
  return slots_[i];
}

uint64_t output::delivered() const noexcept {
  uint64_t n = 0;
  int used = std::min(used_slots_.load(), max_threads_);
  for (int i = 0; i < used; ++i)
    n += slots_[i].count.load(std::memory_order_acquire);
  return n;
}

bool output::wait_for(uint64_t n, std::chrono::nanoseconds timeout) const {
  // Polls with short sleeps: a spinning waiter would take a core from the
  // way being measured on a small machine. Adds at most ~0.2 ms to a run.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (delivered() < n) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

uint64_t output::violations() const noexcept {
  uint64_t n = 0;
  int used = std::min(used_slots_.load(), max_threads_);
  for (int i = 0; i < used; ++i) {
    (void)slots_[i].count.load(std::memory_order_acquire);
    n += slots_[i].violations;
  }
  return n;
}

common::latency_histogram output::latency() const {
  common::latency_histogram h;
  int used = std::min(used_slots_.load(), max_threads_);
  for (int i = 0; i < used; ++i) {
    (void)slots_[i].count.load(std::memory_order_acquire);
    if (slots_[i].latency)
      h.merge(*slots_[i].latency);
  }
  return h;
}

int output::threads() const noexcept {
  return std::min(used_slots_.load(), max_threads_);
}

} // namespace keylane::bench
