// SPDX-License-Identifier: Apache-2.0
// caf_lanes_featured (on request): caf_lanes (caf_lanes.cpp: CAF shard
// actors, per-key lanes with the key's count beside them, heap events,
// no cap) plus what keylane_per_key pays per event for its promises, each
// written as cheaply as this shape allows, so that it is a floor for any
// implementation of keylane_per_key's features, not only for its shape:
//
//   guard       submit may race stop: a count of submits inside (two
//               read-modify-writes) and a closed flag read, per submit
//   credit      an exact window shared by many producers: a compare-and-
//               swap on the count in flight per submit, given back per
//               delivered batch (caf_lanes: one load of the sink's head)
//   seq         many producers: the sequence number from an atomic
//               counter (caf_lanes: a plain one, one producer)
//   stamp       the submit time stamp per event (keylane's stamp_clock)
//   completion  the handler answers through a completion object passed
//               by value; the shard then checks that it answered (else an
//               attempt timer would be armed) and counts the attempt
//   tally       outcome counts per round and the latency histogram per
//               event (one clock read per round), by the shard itself
//   output      a handler's outputs leave through a queue under a mutex to
//               a consumer thread that runs the callback (keylane's
//               output), in per-key order; without it, the sink actor
//               re-sequences them as caf_lanes does
//
// All are on unless named in $KEYLANE_BENCH_FLOOR_WITHOUT (comma-separated),
// so the cost of each shows as the difference between two runs.
// What it still leaves out: retry, parking, the cap and retire, timeouts
// armed, metrics beyond the tally, lanes that move, reload.

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include <keylane/detail/latency_recorder.hpp>
#include <keylane/detail/stamp_clock.hpp>

#include "../way.hpp"
#include "caf_lanes_parts.hpp"
#include "striped_entries.hpp"

namespace keylane::bench {

namespace featured_detail {

using namespace caf_lanes_parts;
using keylane::detail::clock;

enum feature : unsigned {
  guard = 1,
  credit = 2,
  seq = 4,
  stamp = 8,
  completion_ = 16,
  tally = 32,
  output_ = 64,
  all = 127,
};

// The features $KEYLANE_BENCH_FLOOR_WITHOUT does not name (an unknown
// name ends the program: a misspelt run must not pass for a measured one).
unsigned features_from_env() {
  unsigned on = all;
  const char* env = std::getenv("KEYLANE_BENCH_FLOOR_WITHOUT");
  if (env == nullptr)
    return on;
  std::stringstream in{env};
  std::string name;
  while (std::getline(in, name, ',')) {
    static const std::pair<const char*, feature> names[] = {
      {"guard", guard},   {"credit", credit},           {"seq", seq},
      {"stamp", stamp},   {"completion", completion_}, {"tally", tally},
      {"output", output_}};
    bool known = name.empty();
    for (auto& [n, f] : names)
      if (name == n) {
        on &= ~static_cast<unsigned>(f);
        known = true;
      }
    if (!known) {
      std::fprintf(stderr, "KEYLANE_BENCH_FLOOR_WITHOUT: no feature '%s'\n",
                   name.c_str());
      std::exit(2);
    }
  }
  return on;
}

// What the handler answers through: it fills the event's result in the
// call (keylane's synchronous case) and no second answer counts.
class completion {
public:
  explicit completion(event* ev) noexcept : ev_(ev) {}
  completion(completion&& other) noexcept
    : ev_(std::exchange(other.ev_, nullptr)) {}
  void ok(uint64_t r) noexcept {
    if (ev_ == nullptr || ev_->status != 0)
      return;
    ev_->result = r;
    ev_->status = 1;
    ev_ = nullptr;
  }

private:
  event* ev_;
};

struct key_handler {
  virtual ~key_handler() = default;
  virtual void on_event(item& it, completion done) = 0;
  virtual uint64_t on_plain(const item& it) = 0;
};

struct spin_key_handler final : key_handler {
  explicit spin_key_handler(uint64_t iters) : iters(iters) {}
  void on_event(item& it, completion done) override {
    done.ok(do_work(it, iters));
  }
  uint64_t on_plain(const item& it) override { return do_work(it, iters); }
  uint64_t iters;
};

struct lane {
  std::atomic<uint64_t> unfinished{0};
  uint32_t shard = 0;
  bool marked = false;
  std::unique_ptr<key_handler> handler;
  std::vector<event*> queue;
};

struct inbox_item {
  item it;
  uint64_t seq;
  clock::time_point submitted;
  lane* l;
};

// One shard's own counts (single writer, as keylane's outcome_tally).
struct alignas(64) tally_block {
  std::atomic<uint64_t> ok{0};
  std::atomic<uint64_t> failed{0};
  keylane::detail::latency_recorder latency;
};

void bump(std::atomic<uint64_t>& x, uint64_t n) {
  x.store(x.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct shared {
  unsigned on = all;
  output* out = nullptr;
  uint64_t iters = 0;
  std::vector<inbox<inbox_item>> boxes;
  std::vector<tally_block> tallies;
  caf::actor sink;
  // Delivered so far (one writer: the sink or the consumer thread); the
  // window without `credit`.
  alignas(64) std::atomic<uint64_t> delivered{0};
  alignas(64) std::atomic<uint64_t> in_flight{0};
  alignas(64) std::atomic<uint64_t> next_seq{0};
  alignas(64) std::atomic<int> inside{0};
  std::atomic<bool> closed{false};
  alignas(64) std::atomic<bool> blocked{false};
  std::mutex mtx;
  std::condition_variable cv;
  // The output queue and its consumer thread (`output`).
  alignas(64) std::mutex out_mtx;
  std::condition_variable ready;
  std::vector<event*> queued;
  bool consumer_asleep = false;
  bool stop = false;
  std::atomic<bool> nonempty{false};
};

// Hands `n` delivered events back: the window's count, and a blocked
// producer woken if there is room.
void give_back(shared& sh, uint64_t n) {
  if (sh.on & credit)
    sh.in_flight.fetch_sub(n, std::memory_order_seq_cst);
  sh.delivered.store(sh.delivered.load(std::memory_order_relaxed) + n,
                     std::memory_order_seq_cst);
  if (sh.blocked.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> guard{sh.mtx};
    sh.cv.notify_one();
  }
}

void deliver_all(shared& sh, event** evs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    sh.out->deliver(evs[i]->it, evs[i]->result);
    delete evs[i];
  }
  if (n > 0)
    give_back(sh, n);
}

// keylane's output: the round's events join the queue, the consumer thread
// is woken if it sleeps.
void emit(shared& sh, std::vector<event*>& evs) {
  std::unique_lock<std::mutex> guard{sh.out_mtx};
  sh.queued.insert(sh.queued.end(), evs.begin(), evs.end());
  sh.nonempty.store(true, std::memory_order_release);
  bool wake = sh.consumer_asleep;
  guard.unlock();
  if (wake)
    sh.ready.notify_all();
  evs.clear();
}

void consume_loop(shared& sh) {
  std::vector<event*> batch;
  std::unique_lock<std::mutex> guard{sh.out_mtx};
  for (;;) {
    if (sh.queued.empty() && !sh.stop) {
      guard.unlock();
      for (int i = 0; i < 256 && !sh.nonempty.load(std::memory_order_acquire);
           ++i) {
      }
      guard.lock();
    }
    while (sh.queued.empty() && !sh.stop) {
      sh.consumer_asleep = true;
      sh.ready.wait(guard);
      sh.consumer_asleep = false;
    }
    if (sh.queued.empty())
      return;
    batch.swap(sh.queued);
    sh.nonempty.store(false, std::memory_order_relaxed);
    guard.unlock();
    deliver_all(sh, batch.data(), batch.size());
    batch.clear();
    guard.lock();
  }
}

caf::behavior shard_actor(caf::event_based_actor* self, shared* sh,
                          size_t index) {
  struct state {
    std::vector<inbox_item> buf = std::vector<inbox_item>(inbox_batch);
    std::vector<lane*> touched;
    std::vector<event*> done;
    std::vector<clock::time_point> notes; // `tally`: one per event
  };
  auto st = std::make_shared<state>();
  auto take = [st](const inbox_item& x) {
    auto* ev = new event;
    ev->it = x.it;
    ev->seq = x.seq;
    ev->submitted = x.submitted;
    x.l->queue.push_back(ev);
    if (!x.l->marked) {
      x.l->marked = true;
      st->touched.push_back(x.l);
    }
  };
  auto run = [self, sh, st, index] {
    auto on = sh->on;
    auto& done = st->done;
    for (auto* l : st->touched) {
      if (!l->handler)
        l->handler = std::make_unique<spin_key_handler>(sh->iters);
      for (auto* ev : l->queue) {
        if (on & completion_) {
          l->handler->on_event(ev->it, completion{ev});
          ++ev->attempts;
          if (ev->status == 0) // never answered: would arm its timeout
            sh->out->note_failure();
        } else {
          ev->result = l->handler->on_plain(ev->it);
          ev->attempts = 1;
        }
        if (on & tally)
          st->notes.push_back(ev->submitted);
        done.push_back(ev);
      }
      l->marked = false;
    }
    if (done.empty())
      return;
    if (on & tally) {
      auto& t = sh->tallies[index];
      bump(t.ok, st->notes.size());
      auto now = clock::now();
      for (auto at : st->notes)
        t.latency.record(now - at);
      st->notes.clear();
    }
    if (on & output_) {
      emit(*sh, done);
    } else {
      auto list = std::make_shared<std::vector<event*>>();
      list->swap(done);
      self->send(sh->sink, done_atom::value, std::move(list));
    }
    // Last: once its count is zero a key's next event may start it on the
    // other shard, so its outputs must be in the queue before.
    for (auto* l : st->touched) {
      auto ran = l->queue.size();
      l->queue.clear();
      l->unfinished.fetch_sub(ran, std::memory_order_release);
    }
    st->touched.clear();
  };
  return {
    [=](wake_atom) {
      auto n = caf_lanes_parts::take(sh->boxes[index], st->buf);
      for (size_t i = 0; i < n; ++i)
        take(st->buf[i]);
      run();
      if (n == inbox_batch)
        self->send(self, wake_atom::value);
    },
  };
}

// caf_lanes' sink: submission order in a window of 65,536.
caf::behavior sink_actor(caf::event_based_actor*, shared* sh) {
  struct state {
    std::vector<event*> ring = std::vector<event*>(window);
    uint64_t head = 0;
    std::vector<event*> ready;
  };
  auto st = std::make_shared<state>();
  return {
    [=](done_atom, event_list& evs) {
      for (auto* ev : *evs) {
        auto*& slot = st->ring[ev->seq % window];
        if (slot != nullptr) {
          sh->out->note_failure();
          delete slot;
        }
        slot = ev;
      }
      for (;;) {
        auto*& slot = st->ring[st->head % window];
        if (slot == nullptr)
          break;
        st->ready.push_back(slot);
        slot = nullptr;
        ++st->head;
      }
      deliver_all(*sh, st->ready.data(), st->ready.size());
      st->ready.clear();
    },
  };
}

class caf_lanes_featured final : public way {
public:
  explicit caf_lanes_featured(int threads) {
    sh_.on = features_from_env();
    sh_.boxes = std::vector<inbox<inbox_item>>(static_cast<size_t>(threads));
    sh_.tallies = std::vector<tally_block>(static_cast<size_t>(threads));
    configure(cfg_, threads);
  }

  std::string start(output& out, uint64_t work_iters) override {
    sh_.out = &out;
    sh_.iters = work_iters;
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    if (sh_.on & output_)
      consumer_ = std::thread{[this] { consume_loop(sh_); }};
    else
      sh_.sink = sys_->spawn(sink_actor, &sh_);
    for (size_t i = 0; i < sh_.boxes.size(); ++i)
      sh_.boxes[i].actor = sys_->spawn(shard_actor, &sh_, i);
    return {};
  }

  bool submit(const item& it) override {
    auto on = sh_.on;
    if (on & guard) {
      sh_.inside.fetch_add(1, std::memory_order_seq_cst);
      if (sh_.closed.load(std::memory_order_seq_cst)) {
        sh_.inside.fetch_sub(1, std::memory_order_release);
        return false;
      }
    }
    take_window(on);
    uint64_t seq = (on & featured_detail::seq)
                     ? sh_.next_seq.fetch_add(1, std::memory_order_acq_rel)
                     : next_++;
    auto at = (on & stamp) ? keylane::detail::stamp_clock::now()
                           : clock::time_point{};
    bool idle = false;
    auto* l = lanes_.add(it.key, idle);
    if (idle)
      l->shard = by_load(sh_.boxes);
    bool sent = caf_lanes_parts::send(sh_.boxes[l->shard],
                                      inbox_item{it, seq, at, l});
    if (on & guard)
      sh_.inside.fetch_sub(1, std::memory_order_release);
    return sent;
  }

  std::string stop() override {
    sh_.closed.store(true, std::memory_order_seq_cst);
    while (sh_.inside.load(std::memory_order_acquire) != 0)
      std::this_thread::yield();
    for (auto& box : sh_.boxes) {
      caf::anon_send_exit(box.actor, caf::exit_reason::user_shutdown);
      box.actor = nullptr;
    }
    if (sh_.sink) {
      caf::anon_send_exit(sh_.sink, caf::exit_reason::user_shutdown);
      sh_.sink = nullptr;
    }
    sys_.reset();
    if (consumer_.joinable()) {
      {
        std::lock_guard<std::mutex> guard{sh_.out_mtx};
        sh_.stop = true;
      }
      sh_.ready.notify_all();
      consumer_.join();
    }
    uint64_t counted = 0;
    for (auto& t : sh_.tallies)
      counted += t.latency.snapshot().count;
    if ((sh_.on & tally) && counted != sh_.delivered.load())
      return "tally counted " + std::to_string(counted) + " of "
             + std::to_string(sh_.delivered.load()) + " delivered";
    return {};
  }

private:
  // One more event in flight: with `credit`, keylane's compare-and-swap
  // on the shared count; else caf_lanes' read of what was delivered.
  void take_window(unsigned on) {
    auto room = [&] {
      if (!(on & credit))
        return taken_ - sh_.delivered.load(std::memory_order_acquire) < window;
      auto cur = sh_.in_flight.load(std::memory_order_seq_cst);
      while (cur < window)
        if (sh_.in_flight.compare_exchange_weak(cur, cur + 1,
                                                std::memory_order_seq_cst))
          return true;
      return false;
    };
    if (!room()) {
      std::unique_lock<std::mutex> lock{sh_.mtx};
      sh_.blocked.store(true, std::memory_order_seq_cst);
      sh_.cv.wait(lock, room);
      sh_.blocked.store(false, std::memory_order_relaxed);
    }
    ++taken_;
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  shared sh_;
  striped_entries<uint64_t, lane, int_hash> lanes_;
  std::thread consumer_;
  uint64_t next_ = 0;  // without `seq`: producer only
  uint64_t taken_ = 0; // events this producer put in the window
};

} // namespace featured_detail

std::unique_ptr<way> make_caf_lanes_featured(int threads) {
  return std::make_unique<featured_detail::caf_lanes_featured>(threads);
}

} // namespace keylane::bench
