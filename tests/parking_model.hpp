// SPDX-License-Identifier: Apache-2.0
#pragma once

// The parking tests' model: what the runtime must do with each planned
// event, what came out, and the problems found.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <keylane/runtime.hpp>

#include "fault_support.hpp"

using namespace keylane;
using namespace keylane::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace parking_support {

using rt_type = runtime<item, uint64_t>;
using ev_type = rt_type::event_type;
using clk = std::chrono::steady_clock;

// Every wait is bounded: a hang fails the test instead of blocking CI.
inline constexpr auto wait_limit = std::chrono::seconds(90);

// -- problems -----------------------------------------------------------------

// Collects mismatches so one CHECK reports the first few of thousands.
struct problems {
  std::vector<std::string> list;
  size_t total = 0;
  template <class... Ts>
  void add(const Ts&... xs) {
    ++total;
    if (list.size() < 25) {
      std::ostringstream out;
      (out << ... << xs);
      list.push_back(out.str());
    }
  }
  [[nodiscard]] std::string render() const {
    std::string out = std::to_string(total) + " problem(s)";
    for (auto& x : list)
      out += "\n  " + x;
    return out;
  }
};

#define CHECK_NO_PROBLEMS(p)                                                   \
  do {                                                                         \
    INFO((p).render());                                                        \
    CHECK((p).total == 0);                                                     \
  } while (false)

// -- what came out ------------------------------------------------------------

struct output {
  uint64_t seq = 0;
  uint64_t id = 0;
  uint32_t key_id = 0;
  outcome status = outcome::pending;
  std::optional<uint64_t> result;
  std::string error;
  uint32_t attempts = 0;
};

// Every output in emission order.
class output_log {
public:
  void take(const ev_type& e) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      all_.push_back(output{e.seq, e.payload.id, e.payload.key_id, e.status,
                            e.result, e.error, e.attempts});
    }
    cv_.notify_all();
  }

  [[nodiscard]] bool wait_for(size_t n, std::chrono::nanoseconds limit) {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, limit, [&] { return all_.size() >= n; });
  }

  [[nodiscard]] size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return all_.size();
  }

  [[nodiscard]] std::vector<output> snapshot() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return all_;
  }

private:
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<output> all_;
};

// -- the model ----------------------------------------------------------------

// What the runtime must do with one event in one run.
struct expectation {
  outcome status = outcome::pending;
  // Handler attempts (0: it never reached the handler).
  uint32_t attempts = 0;
  // The attempt whose failure ended it (0: it did not fail).
  uint32_t final_attempt = 0;
  // Parked behind an earlier parked event of its key.
  bool behind = false;
};

// One run of the runtime between two drains.
struct phase {
  explicit phase(size_t keys) : order(keys) {}
  std::map<uint64_t, expectation> expect;    // by payload id
  std::vector<std::vector<uint64_t>> order;  // per key: ids in lane order
  std::set<uint64_t> replayed;               // ids resubmitted by replay
  size_t log_begin = 0;                      // first output of the run
};

// The keys' parked lists, as the runtime must keep them.
class model {
public:
  model(const fault_table& t, size_t keys, const settings& cfg)
    : table_(t), parked_(keys), lists_(keys),
      max_attempts_(static_cast<uint32_t>(cfg.max_attempts)),
      mode_(cfg.park) {}

  // `ids` of key `k` reach its lane in this order in `ph`.
  void run(uint32_t k, const std::vector<uint64_t>& ids, phase& ph) {
    for (auto id : ids) {
      ph.order[k].push_back(id);
      expectation e;
      if (parked_[k]) {
        e.status = outcome::parked;
        e.behind = true;
        lists_[k].push_back(id);
        ph.expect[id] = e;
        continue;
      }
      auto p = table_.get(id);
      bool fails = false;
      if (p.failures >= max_attempts_) {
        e.attempts = max_attempts_;
        fails = true;
      } else {
        e.attempts = p.failures + 1;
        if (p.then == plan::end::permanent)
          fails = true;
        else
          e.status = p.then == plan::end::skip ? outcome::skipped
                                               : outcome::ok;
      }
      if (fails) {
        e.final_attempt = e.attempts;
        if (mode_ == park_mode::none) {
          e.status = outcome::failed;
        } else {
          e.status = outcome::parked;
          parked_[k] = true;
          lists_[k].push_back(id);
        }
      }
      ph.expect[id] = e;
    }
  }

  // Un-parks `k` and hands back its parked ids (for replay or discard).
  std::vector<uint64_t> take_parked(uint32_t k) {
    parked_[k] = false;
    return std::exchange(lists_[k], {});
  }

  [[nodiscard]] const std::vector<uint64_t>& parked(uint32_t k) const {
    return lists_[k];
  }

  [[nodiscard]] std::vector<uint32_t> parked_keys() const {
    std::vector<uint32_t> out;
    for (uint32_t k = 0; k < lists_.size(); ++k)
      if (!lists_[k].empty())
        out.push_back(k);
    return out;
  }

  [[nodiscard]] size_t keys() const noexcept { return lists_.size(); }

private:
  const fault_table& table_;
  std::vector<bool> parked_;
  std::vector<std::vector<uint64_t>> lists_;
  uint32_t max_attempts_;
  park_mode mode_;
};

// Why the reason `r` does not fit event `id` (empty if it does).
inline std::string reason_problem(const plan& p, uint64_t id, const expectation& e,
                           uint32_t max_attempts, const std::string& r) {
  auto contains = [&r](const std::string& x) {
    return r.find(x) != std::string::npos;
  };
  if (e.behind)
    return r == parked_behind_reason
             ? ""
             : std::string{"expected \""} + parked_behind_reason + "\"";
  if (e.final_attempt == 0)
    return "";
  if (p.failures < max_attempts)
    return r == injected_permanent(id) ? ""
                                       : "expected " + injected_permanent(id);
  auto a = max_attempts;
  if (a <= 32 && (p.overtaken >> (a - 1) & 1u) != 0)
    return contains("timed out") ? "" : "expected a timeout";
  switch (p.how) {
    case fail_how::fail:
    case fail_how::fail_later:
      return r == injected_failure(id, a) ? ""
                                          : "expected " + injected_failure(id, a);
    case fail_how::raise:
      return contains(injected_exception(id, a))
               ? ""
               : "expected it to name " + injected_exception(id, a);
    case fail_how::drop:
      return contains("dropped completion") ? ""
                                            : "expected a dropped completion";
    case fail_how::hang_thread:
    case fail_how::hang_timer:
      return contains("timed out") ? "" : "expected a timeout";
  }
  return "";
}

// -- backoff ------------------------------------------------------------------

// min(max_backoff, initial * multiplier^(failed - 1)), computed here rather
// than taken from the runtime.
inline std::chrono::duration<double, std::milli> backoff_cap(const settings& s,
                                                      uint32_t failed) {
  double ms = static_cast<double>(s.initial_backoff_ms);
  for (uint32_t i = 1; i < failed; ++i) {
    ms *= s.backoff_multiplier;
    if (ms >= static_cast<double>(s.max_backoff_ms))
      break;
  }
  return std::chrono::duration<double, std::milli>(
    std::min(ms, static_cast<double>(s.max_backoff_ms)));
}

// The time from a failed attempt to the next attempt of the same event.
struct backoff_gap {
  uint64_t id;
  uint32_t failed;  // failed attempts so far
  std::chrono::duration<double, std::milli> gap;
  std::chrono::duration<double, std::milli> cap;
};


} // namespace parking_support
