// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "keylane/config.hpp"
#include "keylane/detail/event_base.hpp"
#include "keylane/detail/reorder_buffer.hpp"
#include "keylane/errc.hpp"
#include "keylane/key.hpp"
#include "keylane/outcome.hpp"
#include "keylane/stage.hpp"
#include "keylane/stats.hpp"
#include "keylane/submit_result.hpp"

namespace keylane::detail {

/// A value of any type, owned; the typed layer knows what is inside.
struct box_base {
  virtual ~box_base() = default;
};

template <class T>
struct box final : box_base {
  explicit box(T x) : value(std::move(x)) {}
  T value;
};

using boxed = std::unique_ptr<box_base>;

/// One event on its way through a pipeline.
struct pipeline_item {
  /// Assigned once at the pipeline's ingress; kept by every stage.
  uint64_t seq = 0;
  keylane::key k;
  /// The next stage's input, or the last stage's result; null for a
  /// tombstone.
  boxed value;
  outcome status = outcome::ok;
  /// Why a tombstone ended ("stage: error").
  std::string error;
  /// The stage that ended a tombstone; the stage count for results.
  size_t stage = 0;
};

/// What the core needs of a stage (one keylane runtime).
class stage_port {
public:
  virtual ~stage_port() = default;
  /// Starts `it` in the stage. On rejection `it` is left as it was.
  [[nodiscard]] virtual errc submit(pipeline_item& it) = 0;
  /// Stops the stage's runtime; no output arrives afterwards.
  virtual void stop() = 0;
};

/// Routes a pipeline's events: ingress (sequence numbers, window), the
/// re-sequencer in front of a stage that has one (every `ordered` stage),
/// tombstones past the stages after the one that ended them, and the final
/// re-sequencing.
///
/// Thread-safety: `submit`, `finished`, `drain` and `stats` may be called
/// from any thread at once; one lock serialises routing, so a re-sequencer
/// sees arrivals in a single order and stage submits happen in the order
/// it releases them. Outputs are delivered outside the lock, by one thread
/// at a time, in release order; the window's credit returns after the
/// callback. `stop` is called once.
class pipeline_core {
public:
  using deliver_fn = std::function<void(pipeline_item&)>;

  pipeline_core(const settings& cfg, std::vector<stage_spec> stages,
                deliver_fn deliver);

  /// Stage `i`'s runtime; every stage is attached before the first submit.
  void attach(size_t i, std::unique_ptr<stage_port> port);

  /// Accepts `input` for `k` (a `box` of the first stage's input type).
  submit_result submit(const key& k, boxed& input);

  /// Takes stage `i`'s output for `it.seq` (a result or a tombstone).
  void finished(size_t i, pipeline_item it);

  /// Waits until every accepted event was delivered; false on timeout.
  [[nodiscard]] bool drain(std::chrono::nanoseconds timeout);

  /// Stops every stage; reports what was not delivered.
  stop_report stop();

  [[nodiscard]] pipeline_stats stats() const;

private:
  using lock = std::unique_lock<std::mutex>;
  using batch = std::vector<pipeline_item>;

  // All three run with `mtx_` held.
  void enter(size_t j, pipeline_item it);
  void pass(size_t j, pipeline_item it);
  void fail(size_t j, pipeline_item it, errc code);

  void deliver_ready(lock& guard);

  struct stage_state {
    stage_spec spec;
    std::unique_ptr<stage_port> port;
    std::unique_ptr<reorder_buffer<pipeline_item>> front;
    stage_stats counts;
  };

  size_t window_;
  bool block_;
  deliver_fn deliver_;
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<stage_state> stages_;
  reorder_buffer<pipeline_item> final_;
  batch ready_;
  bool delivering_ = false;
  bool stopping_ = false;
  uint64_t next_seq_ = 0;
  uint64_t delivered_ = 0;
  // Keys of the events not yet delivered, for `stop`'s report.
  std::map<uint64_t, key> open_;
};

} // namespace keylane::detail
