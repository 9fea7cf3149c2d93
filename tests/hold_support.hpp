// SPDX-License-Identifier: Apache-2.0
#pragma once

// A handler whose chosen events wait until the test completes them, so a
// test can hold a lane (or the sink) in a known state without sleeping.

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "keylane/runtime.hpp"

namespace hold_support {

/// Completions the handler left open, by payload; payloads in `fail_once`
/// fail their first attempt with "db down". Complete or drop what is held
/// before the runtime ends (a completion refers to its lane).
struct holder {
  std::mutex mtx;
  std::condition_variable cv;
  std::multimap<int, keylane::completion<int>> open;
  std::set<int> hold;      // payloads to hold (negative: hold every one)
  std::set<int> fail_once;
  std::set<int> failed;    // fail_once payloads that failed already
  int live = 0;            // handler instances alive (one per active lane)
  int peak_live = 0;

  bool holds(int v) {
    return hold.count(v) != 0 || hold.count(-1) != 0;
  }

  /// Waits until `n` events are held.
  bool wait_held(size_t n, std::chrono::seconds limit = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> guard{mtx};
    return cv.wait_for(guard, limit, [&] { return open.size() >= n; });
  }

  /// Holds the payloads in `s` from now on (-1: every one).
  void holding(std::set<int> s) {
    std::lock_guard<std::mutex> guard{mtx};
    hold = std::move(s);
  }

  /// Completes every event held now with ok; keeps holding new ones.
  void release_held() {
    std::multimap<int, keylane::completion<int>> now;
    {
      std::lock_guard<std::mutex> guard{mtx};
      now.swap(open);
    }
    for (auto& [v, c] : now)
      c.ok(v);
  }

  /// Completes the held event `v` with ok(v).
  void release(int v) {
    std::optional<keylane::completion<int>> c;
    {
      std::lock_guard<std::mutex> guard{mtx};
      auto i = open.find(v);
      if (i == open.end())
        return;
      c.emplace(std::move(i->second));
      open.erase(i);
    }
    c->ok(v);
  }

  /// Stops holding and completes every held event.
  void release_all() {
    std::multimap<int, keylane::completion<int>> all;
    {
      std::lock_guard<std::mutex> guard{mtx};
      hold.clear();
      all.swap(open);
    }
    for (auto& [v, c] : all)
      c.ok(v);
  }
};

class held_handler : public keylane::handler<int, int> {
public:
  explicit held_handler(holder* h) : h_(h) {
    std::lock_guard<std::mutex> guard{h_->mtx};
    if (++h_->live > h_->peak_live)
      h_->peak_live = h_->live;
  }
  ~held_handler() override {
    std::lock_guard<std::mutex> guard{h_->mtx};
    --h_->live;
  }
  void on_event(int& v, keylane::completion<int> done) override {
    std::unique_lock<std::mutex> guard{h_->mtx};
    if (h_->fail_once.count(v) != 0 && h_->failed.insert(v).second) {
      guard.unlock();
      done.fail("db down");
      return;
    }
    if (h_->holds(v)) {
      h_->open.emplace(v, std::move(done));
      h_->cv.notify_all();
      return;
    }
    guard.unlock();
    done.ok(v);
  }

private:
  holder* h_;
};

inline keylane::handler_factory factory(holder* h) {
  return [h](const keylane::handler_params&) {
    return std::make_unique<held_handler>(h);
  };
}

} // namespace hold_support
