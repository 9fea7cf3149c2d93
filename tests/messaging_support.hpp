// SPDX-License-Identifier: Apache-2.0
#pragma once

// Fixtures of the messaging tests: a payload that says who sent it, a
// handler made of a function with tell/ask/timers exposed, a journal of
// what keys received, a collector of outputs, and a run of asks in a cycle.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime_support.hpp"

namespace messaging_support {

using namespace runtime_support;

/// What handlers found wrong: Catch's assertions are not for worker
/// threads, so they record here and each test checks it is empty.
inline std::mutex faults_mtx;
inline std::string faults_seen;
inline void fault(const std::string& what) {
  std::lock_guard<std::mutex> guard{faults_mtx};
  faults_seen += what + "\n";
}
inline void expect_none(kl::errc code) {
  if (code != kl::errc::none)
    fault(std::string{"a messaging call returned "} + kl::to_string(code));
}
/// The faults recorded since the last call, which clears them.
inline std::string take_faults() {
  std::lock_guard<std::mutex> guard{faults_mtx};
  return std::exchange(faults_seen, std::string{});
}

/// Checks at the end of a test that no handler recorded a fault.
struct fault_check {
  fault_check() { take_faults(); }
  ~fault_check() { CHECK(take_faults() == ""); }
};

/// A message between keys, or an event from outside (`from` empty).
struct note {
  note() = default;
  note(uint64_t id, int hops = 0, std::string from = {}, uint64_t origin = 0,
       int index = 0)
    : id(id), hops(hops), from(std::move(from)), origin(origin),
      index(index) {}

  uint64_t id = 0;
  int hops = 0;
  std::string from;
  uint64_t origin = 0; // the sending event's id
  int index = 0;       // its place among what that event sent
};

using note_rt = kl::runtime<note, int>;

/// A handler made of a function, with the messaging calls exposed.
struct script_handler : kl::handler<note, int> {
  using fn_type =
    std::function<void(script_handler&, note&, kl::completion<int>)>;
  explicit script_handler(fn_type f) : f_(std::move(f)) {}
  void on_event(note& n, kl::completion<int> done) override {
    f_(*this, n, std::move(done));
  }
  using kl::handler<note, int>::ask;
  using kl::handler<note, int>::tell;
  using kl::handler<note, int>::tell_after;
  using kl::handler_base::cancel_timer;
  using kl::handler_base::current_key;
  using kl::handler_base::hold;
  using kl::handler_base::release;
  using kl::handler_base::run_later;
  fn_type f_;
};

inline kl::handler_factory script(script_handler::fn_type f) {
  return [f](const kl::handler_params&) {
    return std::make_unique<script_handler>(f);
  };
}

/// Runs `then()` in `h`'s lane once `flag` is true, looking again every
/// millisecond on a `run_later` timer: the event stays pending meanwhile
/// and the shard's thread is never blocked.
template <class F>
void when_set(script_handler& h, const std::atomic<bool>& flag, F then) {
  auto step = std::make_shared<std::function<void()>>();
  std::weak_ptr<std::function<void()>> self_ref = step;
  *step = [&h, &flag, self_ref, then = std::move(then)] {
    if (!flag.load()) {
      // The timer's closure owns the function while it waits.
      h.run_later(std::chrono::milliseconds(1),
                  [again = self_ref.lock()] { (*again)(); });
      return;
    }
    then();
  };
  (*step)();
}

inline kl::settings messaging_settings() {
  auto s = two_threads();
  s.order = kl::order_mode::per_key;
  return s;
}

/// What each key received, in the order its handler saw it (first
/// attempts only).
class journal {
public:
  void add(const kl::key& k, const note& n) {
    std::lock_guard<std::mutex> guard{mtx_};
    seen_[k.to_string()].push_back(n);
  }
  std::vector<note> of(const std::string& k) const {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = seen_.find(k);
    return i == seen_.end() ? std::vector<note>{} : i->second;
  }
  std::map<std::string, std::vector<note>> all() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return seen_;
  }

private:
  mutable std::mutex mtx_;
  std::map<std::string, std::vector<note>> seen_;
};

/// The runtime's outputs: key, payload id, status, result.
class outputs {
public:
  struct row {
    std::string key;
    uint64_t id;
    kl::outcome status;
    int result;
  };
  note_rt::callback fn() {
    return [this](note_rt::event_type& e) {
      std::lock_guard<std::mutex> guard{mtx_};
      rows_.push_back(row{e.key().to_string(), e.payload.id, e.status,
                          e.result ? *e.result : -1});
    };
  }
  std::vector<row> rows() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return rows_;
  }
  /// id -> result of the ok outputs of keys starting with `prefix`.
  std::map<uint64_t, int> results_of_prefix(const std::string& prefix) const {
    std::map<uint64_t, int> out;
    for (auto& r : rows())
      if (r.key.rfind(prefix, 0) == 0 && r.status == kl::outcome::ok)
        out[r.id] = r.result;
    return out;
  }
  size_t count_of(const std::string& k) const {
    size_t n = 0;
    for (auto& r : rows())
      n += r.key == k ? 1 : 0;
    return n;
  }

private:
  mutable std::mutex mtx_;
  std::vector<row> rows_;
};

inline std::unique_ptr<note_rt> launch(kl::settings s, kl::handler_factory f,
                                       outputs* out = nullptr) {
  note_rt::callback cb = out ? out->fn() : [](note_rt::event_type&) {};
  return start<note_rt>(std::move(s), std::move(f), std::move(cb));
}

struct cycle_result {
  int timeouts = 0;
  bool drained = false;
  uint64_t in_flight = 0;
  std::string first_error;
};

/// Each key of `ring` asks the next (the last asks the first) when an
/// event from outside reaches the first: the asks wait on each other until
/// one times out. Every ask's answer finishes its event.
inline cycle_result run_ask_cycle(std::vector<std::string> ring) {
  cycle_result r;
  std::mutex mtx;
  auto next_of = [ring](const kl::key& k) {
    for (size_t i = 0; i < ring.size(); ++i)
      if (kl::key{ring[i]} == k)
        return ring[(i + 1) % ring.size()];
    return ring[0];
  };
  auto s = messaging_settings();
  auto rt = launch(s, script([&](script_handler& h, note& n,
                                 kl::completion<int> done) {
    if (n.hops == 0)
      return done.ok(0); // answers at once: it asks nobody
    auto code = h.ask(next_of(h.current_key()), note{n.id + 1, n.hops - 1},
                      200ms,
                      [&, d = std::move(done)](caf::expected<int> a) mutable {
                        if (a)
                          return d.ok(*a);
                        std::lock_guard<std::mutex> guard{mtx};
                        if (a.error().code()
                            == static_cast<uint8_t>(kl::errc::ask_timeout))
                          ++r.timeouts;
                        if (r.first_error.empty())
                          r.first_error = kl::render(a.error());
                        d.skip();
                      });
    expect_none(code);
  }));
  // Hops: enough to come back round to the first key and ask again.
  REQUIRE(rt->submit(ring[0], note{1, int(ring.size()) + 1}));
  r.drained = rt->drain(20s);
  r.in_flight = rt->stats().messages_in_flight;
  return r;
}

} // namespace messaging_support
