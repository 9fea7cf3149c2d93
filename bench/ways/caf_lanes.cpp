// SPDX-License-Identifier: Apache-2.0
// Baseline 9 (on request), caf_lanes: keylane's shape with no keylane code
// and none of its promises beyond order — what the design card's layout
// costs by itself. `keyed_slots` (ordered_partitions.cpp) plus what that
// layout adds: shards and the sink are CAF actors on the sharing scheduler
// with --threads workers (2 by default) and as many shards; `submit` puts an item in its shard's inbox and sends
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
//
// caf_lanes_capped (on request) adds the one promise that makes lanes
// start and retire: at most 4,096 keys live at once (keylane ways'
// max_active_keys), the others waiting in arrival order. A key with no
// lane takes a free slot at once, else its events wait beside its count
// and the key joins one queue under one lock; a lane whose events all ran
// keeps its slot until keys wait, then its shard retires it (its handler
// goes) and starts the oldest waiting key on itself, running that key's
// held events at once. The floor of a capped pipeline of that shape.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "../way.hpp"
#include "caf_lanes_parts.hpp"
#include "striped_entries.hpp"

namespace keylane::bench {

namespace caf_lanes_detail {

using namespace caf_lanes_parts;
using reclaim_atom = caf::atom_constant<caf::atom("reclaim")>;

constexpr size_t capped_keys = 4096; // keylane ways' max_active_keys

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

struct inbox_item;

// A key's lane: its count of unfinished events (producer and shard), the
// shard it runs on (producer), its handler and queue (that shard only).
// With the cap, under the key's stripe lock: whether it holds a slot, and
// the events it holds while it waits for one.
struct lane {
  std::atomic<uint64_t> unfinished{0};
  uint32_t shard = 0;
  bool marked = false;
  uint64_t last_seq = 0; // an event that runs before an earlier one of
                         // its key (a lane moved while busy) fails the run
  std::unique_ptr<key_handler> handler;
  std::vector<event*> queue;
  uint64_t key = 0; // set once, before any shard sees the lane
  bool named = false;
  bool live = false;
  bool waiting = false;
  std::vector<inbox_item> held;
};

struct inbox_item {
  item it;
  uint64_t seq;
  lane* l;
};

using lane_table = striped_entries<uint64_t, lane, int_hash>;

struct shared {
  output* out = nullptr;
  uint64_t iters = 0;
  std::vector<inbox<inbox_item>> boxes; // one per shard, made once
  caf::actor sink;
  alignas(64) std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<bool> blocked{false};
  std::mutex mtx;
  std::condition_variable cv;
  // The cap (0: none): free slots, and the keys waiting, oldest first.
  size_t cap = 0;
  lane_table* lanes = nullptr;
  alignas(64) std::atomic<int64_t> free_slots{0};
  alignas(64) std::atomic<size_t> waiting_n{0};
  std::atomic<uint64_t> started{0}; // lanes that took a slot
  std::mutex adm;
  std::deque<lane*> waiting;
};

bool take_slot(shared& sh) {
  auto n = sh.free_slots.load(std::memory_order_seq_cst);
  while (n > 0)
    if (sh.free_slots.compare_exchange_weak(n, n - 1,
                                            std::memory_order_seq_cst))
      return true;
  return false;
}

lane* pop_waiting(shared& sh) {
  std::lock_guard<std::mutex> guard{sh.adm};
  if (sh.waiting.empty())
    return nullptr;
  auto* w = sh.waiting.front();
  sh.waiting.pop_front();
  sh.waiting_n.fetch_sub(1, std::memory_order_seq_cst);
  return w;
}

caf::behavior shard_actor(caf::event_based_actor* self, shared* sh,
                          size_t index) {
  struct state {
    std::vector<inbox_item> buf = std::vector<inbox_item>(inbox_batch);
    std::vector<lane*> touched;
    std::deque<lane*> dry; // with the cap: lanes whose events all ran
  };
  auto st = std::make_shared<state>();
  auto take = [st](const inbox_item& x) {
    auto* ev = new event;
    ev->it = x.it;
    ev->seq = x.seq;
    x.l->queue.push_back(ev);
    if (!x.l->marked) {
      x.l->marked = true;
      st->touched.push_back(x.l);
    }
  };
  auto run = [self, sh, st](size_t events) {
    auto done = std::make_shared<std::vector<event*>>();
    done->reserve(events);
    for (auto* l : st->touched) {
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
      // another shard.
      auto ran = l->queue.size();
      l->queue.clear();
      l->marked = false;
      if (l->unfinished.fetch_sub(ran, std::memory_order_release) == ran
          && sh->cap != 0)
        st->dry.push_back(l);
    }
    st->touched.clear();
    if (!done->empty())
      self->send(sh->sink, done_atom::value, std::move(done));
  };
  // With the cap, while keys wait: a free slot, or else a dry lane's
  // (retired here, oldest first), goes to the oldest waiting key, whose
  // lane starts on this shard and runs its held events now.
  auto admit = [sh, st, index, take, run] {
    while (sh->waiting_n.load(std::memory_order_seq_cst) > 0) {
      bool slot = take_slot(*sh);
      while (!slot && !st->dry.empty()) {
        auto* l = st->dry.front();
        st->dry.pop_front();
        sh->lanes->locked(l->key, [&](lane& x) {
          if (x.live && x.shard == index
              && x.unfinished.load(std::memory_order_acquire) == 0) {
            x.live = false;
            x.handler.reset();
            slot = true;
          }
        });
      }
      if (!slot)
        return;
      auto* w = pop_waiting(*sh);
      if (w == nullptr) {
        sh->free_slots.fetch_add(1, std::memory_order_seq_cst);
        continue; // a key that began to wait meanwhile finds it
      }
      sh->started.fetch_add(1, std::memory_order_relaxed);
      std::vector<inbox_item> held;
      sh->lanes->locked(w->key, [&](lane& x) {
        x.live = true;
        x.waiting = false;
        x.shard = static_cast<uint32_t>(index);
        held.swap(x.held);
      });
      for (auto& x : held)
        take(x);
      run(held.size());
    }
  };
  return {
    [=](wake_atom) {
      auto n = caf_lanes_parts::take(sh->boxes[index], st->buf);
      for (size_t i = 0; i < n; ++i)
        take(st->buf[i]);
      run(n);
      if (sh->cap != 0)
        admit();
      if (n == inbox_batch)
        self->send(self, wake_atom::value);
    },
    [=](reclaim_atom) {
      sh->boxes[index].reclaim_signalled.store(false,
                                               std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      admit();
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
  caf_lanes(size_t cap, int threads) {
    sh_.boxes = std::vector<inbox<inbox_item>>(static_cast<size_t>(threads));
    sh_.cap = cap;
    sh_.lanes = &lanes_;
    sh_.free_slots.store(static_cast<int64_t>(cap));
    configure(cfg_, threads);
  }

  std::string start(output& out, uint64_t work_iters) override {
    sh_.out = &out;
    sh_.iters = work_iters;
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sh_.sink = sys_->spawn(sink_actor, &sh_);
    for (size_t i = 0; i < sh_.boxes.size(); ++i)
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
    if (sh_.cap != 0)
      return submit_capped(it);
    bool idle = false;
    auto* l = lanes_.add(it.key, idle);
    if (idle) // placed by load, as keylane places a starting lane
      l->shard = by_load(sh_.boxes);
    return send(l->shard, inbox_item{it, next_++, l});
  }

  // One event to shard `i`'s inbox, waking the shard if need be.
  bool send(uint32_t i, const inbox_item& x) {
    return caf_lanes_parts::send(sh_.boxes[i], x);
  }

  // With the cap: a key with a slot goes to its lane; one without takes a
  // free slot if no key waits, else holds the event and waits in turn.
  bool submit_capped(const item& it) {
    auto seq = next_++;
    bool idle = false;
    bool held = false;
    bool first = false;
    auto* l = lanes_.add(it.key, idle, [&](lane& x, bool was_idle) {
      if (!x.named) {
        x.named = true;
        x.key = it.key;
      }
      if (!x.live && !x.waiting
          && sh_.waiting_n.load(std::memory_order_seq_cst) == 0
          && take_slot(sh_)) {
        x.live = true;
        x.shard = by_load(sh_.boxes);
        sh_.started.fetch_add(1, std::memory_order_relaxed);
      } else if (x.live) {
        if (was_idle)
          x.shard = by_load(sh_.boxes);
      } else {
        held = true;
        x.held.push_back(inbox_item{it, seq, &x});
        if (!x.waiting) {
          x.waiting = true;
          std::lock_guard<std::mutex> guard{sh_.adm};
          sh_.waiting.push_back(&x);
          first = sh_.waiting_n.fetch_add(1, std::memory_order_seq_cst) == 0;
        }
      }
    });
    if (!held)
      return send(l->shard, inbox_item{it, seq, l});
    if (first) {
      // A slot freed meanwhile would idle: take it here; else the shards
      // retire dry lanes for the waiting keys.
      while (take_slot(sh_) && admit_oldest()) {
      }
      for (auto& box : sh_.boxes)
        if (!box.reclaim_signalled.exchange(true, std::memory_order_acq_rel))
          caf::anon_send(box.actor, reclaim_atom::value);
    }
    return true;
  }

  // Starts the oldest waiting key with a slot taken; false (the slot given
  // back) if none waits.
  bool admit_oldest() {
    auto* w = pop_waiting(sh_);
    if (w == nullptr) {
      sh_.free_slots.fetch_add(1, std::memory_order_seq_cst);
      return false;
    }
    std::vector<inbox_item> held;
    uint32_t to = 0;
    sh_.started.fetch_add(1, std::memory_order_relaxed);
    lanes_.locked(w->key, [&](lane& x) {
      x.live = true;
      x.waiting = false;
      x.shard = to = by_load(sh_.boxes);
      held.swap(x.held);
      // Sent under the key's lock: its next event, sent after this one
      // sees it live, goes behind them.
      for (auto& h : held)
        send(to, h);
    });
    return true;
  }

  uint64_t lanes_spawned() const override {
    return sh_.started.load(std::memory_order_relaxed);
  }

  std::string stop() override {
    std::string note;
    if (sh_.cap != 0) {
      // Every slot of the cap is free or held by a live lane, none twice.
      int64_t live = 0;
      lanes_.for_each([&](lane& x) { live += x.live; });
      auto free = sh_.free_slots.load(std::memory_order_seq_cst);
      if (live + free != static_cast<int64_t>(sh_.cap))
        note = "cap broken: " + std::to_string(live) + " live lanes and "
               + std::to_string(free) + " free slots of "
               + std::to_string(sh_.cap);
    }
    for (auto& box : sh_.boxes) {
      caf::anon_send_exit(box.actor, caf::exit_reason::user_shutdown);
      box.actor = nullptr;
    }
    caf::anon_send_exit(sh_.sink, caf::exit_reason::user_shutdown);
    sh_.sink = nullptr;
    sys_.reset();
    return note;
  }

private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  shared sh_;
  lane_table lanes_;
  uint64_t next_ = 0; // producer only
};

} // namespace caf_lanes_detail

std::unique_ptr<way> make_caf_lanes(int threads) {
  return std::make_unique<caf_lanes_detail::caf_lanes>(0, threads);
}

std::unique_ptr<way> make_caf_lanes_capped(int threads) {
  return std::make_unique<caf_lanes_detail::caf_lanes>(
    caf_lanes_detail::capped_keys, threads);
}

} // namespace keylane::bench
