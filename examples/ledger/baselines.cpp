// SPDX-License-Identifier: Apache-2.0
// The two baselines: plain threads, no CAF. Each worker "does the database
// round trip" by sleeping the event's latency, then applies the event.

#include <mutex>
#include <thread>
#include <vector>

#include <keylane/key.hpp>

#include "account.hpp"
#include "tally.hpp"
#include "ways.hpp"
#include "work_queue.hpp"

namespace ledger {

namespace {

// The baselines' database: every account's state behind one lock. Recording
// in the tally under the same lock keeps its order the order of application.
class shared_book {
public:
  shared_book(const workload& w, tally& t)
    : accounts_(w.events_per_account.size()), tally_(t) {}

  void apply_event(const ledger_event& ev) {
    std::lock_guard<std::mutex> guard{mtx_};
    bool accepted = apply(accounts_.at(ev.account), ev);
    tally_.applied(ev, accepted);
  }

private:
  std::mutex mtx_;
  std::vector<account_state> accounts_;
  tally& tally_;
};

// Runs `queue` until it is closed and empty.
void work(work_queue<ledger_event>& queue, shared_book& book, tally& t) {
  while (auto ev = queue.pop()) {
    std::this_thread::sleep_for(ev->latency);
    book.apply_event(*ev);
    t.finished(ev->account);
  }
}

} // namespace

way_result run_shared_queue(const workload& w,
                            keylane::cli::progress* shown) {
  tally t{w, shown};
  shared_book book{w, t};
  work_queue<ledger_event> queue;
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < worker_count; ++i)
    workers.emplace_back([&] { work(queue, book, t); });
  t.start();
  for (const auto& ev : w.events)
    queue.push(ev);
  queue.close();
  for (auto& th : workers)
    th.join();
  return t.result("shared_queue");
}

way_result run_hash_partitions(const workload& w,
                               keylane::cli::progress* shown) {
  tally t{w, shown};
  shared_book book{w, t};
  std::vector<work_queue<ledger_event>> queues(worker_count);
  std::vector<size_t> route;
  for (const auto& name : w.names)
    route.push_back(keylane::stable_hash(name) % worker_count);
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < worker_count; ++i)
    workers.emplace_back([&, i] { work(queues[i], book, t); });
  t.start();
  for (const auto& ev : w.events)
    queues[route[ev.account]].push(ev);
  for (auto& q : queues)
    q.close();
  for (auto& th : workers)
    th.join();
  return t.result("hash_partitions");
}

} // namespace ledger
