// SPDX-License-Identifier: Apache-2.0
// Baseline 9 (on request), caf_lanes: keylane's shape with no keylane code
// and none of its promises beyond order — what the design card's layout
// costs by itself. `keyed_slots` (ordered_partitions.cpp) plus what that
// layout adds: shards and the sink are CAF actors on the sharing scheduler
// with two workers; `submit` puts an item in its shard's inbox and sends
// the shard a wake-up message only if none is pending; the shard takes up
// to 1,024 items a round, builds a heap event for each (kept until the
// sink delivered it, as keylane keeps an event until it completed), puts
// it on its key's lane queue, runs the lanes it touched and sends the
// round's events to the sink actor in one message; the sink re-sequences
// them into submission order in a window of 65,536 and delivers. It leaves
// out everything else keylane pays for: no cap of live keys (lanes never
// retire; the lane sits beside the key's count, found with no lookup),
// no completion or attempt bookkeeping, no retry, timeout or parking,
// no submit time stamp, no metrics. So it is a floor for any
// implementation of that shape on this machine.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <keylane/detail/mpmc_queue.hpp>
#include <keylane/key.hpp>

#include "../way.hpp"
#include "striped_entries.hpp"

namespace keylane::bench::caf_lanes_detail {

struct event;
using event_list = std::shared_ptr<std::vector<event*>>;

} // namespace keylane::bench::caf_lanes_detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(keylane::bench::caf_lanes_detail::event_list)

namespace keylane::bench {

namespace caf_lanes_detail {

using wake_atom = caf::atom_constant<caf::atom("wake")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

constexpr size_t shard_count = 2;
constexpr size_t inbox_batch = 1024;
constexpr uint64_t window = 65536; // keylane ways' runtime.window

struct key_handler {
  virtual ~key_handler() = default;
  virtual uint64_t on_event(const item& it, uint64_t iters) = 0;
};

struct spin_key_handler final : key_handler {
  uint64_t on_event(const item& it, uint64_t iters) override {
    ++events;
    return do_work(it, iters);
  }
  uint64_t events = 0;
};

// As keylane's event: the item, its sequence number and result, and room
// for what an event carries through retry and parking (an error text, an
// attempt count, two time points), so it spans the same three lines.
struct event {
  item it;
  uint64_t seq = 0;
  uint64_t result = 0;
  std::string error;
  int64_t submitted_ns = 0;
  int64_t started_ns = 0;
  uint32_t attempts = 0;
  uint8_t status = 0;
  char pad[96];
};
static_assert(sizeof(event) == 192, "three lines, as keylane's event");

// A key's lane: its count of unfinished events (producer and shard), the
// shard it runs on (producer), its handler and queue (that shard only).
struct lane {
  std::atomic<uint64_t> unfinished{0};
  uint32_t shard = 0;
  bool marked = false;
  uint64_t last_seq = 0; // an event that runs before an earlier one of
                         // its key (a lane moved while busy) fails the run
  std::unique_ptr<key_handler> handler;
  std::vector<event*> queue;
};

struct inbox_item {
  item it;
  uint64_t seq;
  lane* l;
};

struct alignas(64) inbox {
  keylane::detail::mpmc_queue<inbox_item> items;
  keylane::detail::producer_token token{items};
  alignas(64) std::atomic<bool> signalled{false};
  caf::actor actor;
};

struct int_hash {
  size_t operator()(uint64_t k) const noexcept {
    return static_cast<size_t>(stable_hash(k));
  }
};
using lane_table = striped_entries<uint64_t, lane, int_hash>;

struct shared {
  output* out = nullptr;
  uint64_t iters = 0;
  inbox boxes[shard_count];
  caf::actor sink;
  alignas(64) std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<bool> blocked{false};
  std::mutex mtx;
  std::condition_variable cv;
};

caf::behavior shard_actor(caf::event_based_actor* self, shared* sh,
                          size_t index) {
  auto buf = std::make_shared<std::vector<inbox_item>>(inbox_batch);
  auto touched = std::make_shared<std::vector<lane*>>();
  return {
    [=](wake_atom) {
      auto& box = sh->boxes[index];
      box.signalled.store(false, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      auto n = box.items.try_dequeue_bulk(buf->data(), inbox_batch);
      for (size_t i = 0; i < n; ++i) {
        auto& x = (*buf)[i];
        auto* ev = new event;
        ev->it = x.it;
        ev->seq = x.seq;
        x.l->queue.push_back(ev);
        if (!x.l->marked) {
          x.l->marked = true;
          touched->push_back(x.l);
        }
      }
      auto done = std::make_shared<std::vector<event*>>();
      done->reserve(n);
      for (auto* l : *touched) {
        if (!l->handler)
          l->handler = std::make_unique<spin_key_handler>();
        for (auto* ev : l->queue) {
          if (ev->seq < l->last_seq)
            sh->out->note_failure();
          l->last_seq = ev->seq;
          ev->result = l->handler->on_event(ev->it, sh->iters);
          ev->attempts = 1;
          done->push_back(ev);
        }
        // Last: once the count is zero the producer may move the lane to
        // the other shard.
        auto ran = l->queue.size();
        l->queue.clear();
        l->marked = false;
        l->unfinished.fetch_sub(ran, std::memory_order_release);
      }
      touched->clear();
      if (!done->empty())
        self->send(sh->sink, done_atom::value, std::move(done));
      if (n == inbox_batch)
        self->send(self, wake_atom::value);
    },
  };
}

caf::behavior sink_actor(caf::event_based_actor*, shared* sh) {
  auto ring = std::shared_ptr<event*[]>(new event*[window]());
  return {
    [=](done_atom, event_list& evs) {
      for (auto* ev : *evs) {
        auto*& slot = ring[ev->seq % window];
        if (slot != nullptr) { // two in one cell: the window was overrun
          sh->out->note_failure();
          delete slot;
        }
        slot = ev;
      }
      auto h = sh->head.load(std::memory_order_relaxed);
      auto start = h;
      for (;;) {
        auto*& slot = ring[h % window];
        if (slot == nullptr)
          break;
        sh->out->deliver(slot->it, slot->result);
        delete slot;
        slot = nullptr;
        ++h;
      }
      sh->head.store(h, std::memory_order_seq_cst);
      if (h != start && sh->blocked.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> guard{sh->mtx};
        sh->cv.notify_one();
      }
    },
  };
}

class caf_lanes final : public way {
public:
  caf_lanes() {
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    cfg_.set("scheduler.policy", caf::atom("sharing"));
    cfg_.set("scheduler.max-threads", size_t{2});
    cfg_.set("scheduler.max-throughput", size_t{300});
  }

  std::string start(output& out, uint64_t work_iters) override {
    sh_.out = &out;
    sh_.iters = work_iters;
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sh_.sink = sys_->spawn(sink_actor, &sh_);
    for (size_t i = 0; i < shard_count; ++i)
      sh_.boxes[i].actor = sys_->spawn(shard_actor, &sh_, i);
    return {};
  }

  bool submit(const item& it) override {
    if (next_ - sh_.head.load(std::memory_order_acquire) >= window) {
      std::unique_lock<std::mutex> guard{sh_.mtx};
      sh_.blocked.store(true, std::memory_order_seq_cst);
      sh_.cv.wait(guard, [&] {
        return next_ - sh_.head.load(std::memory_order_seq_cst) < window / 2;
      });
      sh_.blocked.store(false, std::memory_order_relaxed);
    }
    bool idle = false;
    auto* l = lanes_.add(it.key, idle);
    if (idle) // placed by load, as keylane places a starting lane
      l->shard = sh_.boxes[0].items.size_approx()
                     <= sh_.boxes[1].items.size_approx() ? 0 : 1;
    auto& box = sh_.boxes[l->shard];
    if (!box.items.enqueue(box.token, inbox_item{it, next_++, l}))
      return false;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!box.signalled.load(std::memory_order_relaxed)
        && !box.signalled.exchange(true, std::memory_order_acq_rel))
      caf::anon_send(box.actor, wake_atom::value);
    return true;
  }

  std::string stop() override {
    for (auto& box : sh_.boxes) {
      caf::anon_send_exit(box.actor, caf::exit_reason::user_shutdown);
      box.actor = nullptr;
    }
    caf::anon_send_exit(sh_.sink, caf::exit_reason::user_shutdown);
    sh_.sink = nullptr;
    sys_.reset();
    return {};
  }

private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  shared sh_;
  lane_table lanes_;
  uint64_t next_ = 0; // producer only
};

} // namespace caf_lanes_detail

std::unique_ptr<way> make_caf_lanes() {
  return std::make_unique<caf_lanes_detail::caf_lanes>();
}

} // namespace keylane::bench
