// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "keylane/config.hpp"
#include "keylane/detail/pipeline_checks.hpp"
#include "keylane/detail/pipeline_core.hpp"
#include "keylane/detail/stage_runner.hpp"
#include "keylane/stage.hpp"

namespace keylane {

/// What a pipeline delivers for each accepted event: the last stage's
/// result, or a tombstone saying which stage ended the event and why.
template <class Out>
struct pipeline_result {
  /// Assigned at the pipeline's ingress (dense from 0).
  uint64_t seq = 0;
  keylane::key key;
  /// `ok` with `result` set, or how a stage ended it.
  outcome status = outcome::ok;
  /// For tombstones: "<stage name>: <error>" (empty for skips).
  std::string error;
  /// The name of the stage that ended a tombstone; empty for results.
  std::string stage;
  std::optional<Out> result;
};

template <class In, class Out>
class pipeline;

/// Describes a pipeline stage by stage; `start` runs it. `Cur` is the
/// type the last stage added produces.
template <class In, class Cur = In>
class pipeline_builder {
public:
  template <class Next>
  using factory = detail::stage_factory<Cur, Next>;

  pipeline_builder() = default;

  /// Appends a stage whose handlers (`handler<Cur, Next>`, one per lane)
  /// `make` builds.
  template <class Next>
  [[nodiscard]] pipeline_builder<In, Next> stage(stage_spec spec,
                                                 factory<Next> make) && {
    pipeline_builder<In, Next> next;
    next.specs_ = std::move(specs_);
    next.starters_ = std::move(starters_);
    next.specs_.push_back(spec);
    next.starters_.push_back(
      [make = std::move(make)](const settings& cfg, const stage_spec& s,
                               size_t i, detail::pipeline_core* core)
        -> caf::expected<std::unique_ptr<detail::stage_port>> {
        auto r = detail::stage_runner<Cur, Next>::start(cfg, s, i, make,
                                                        core);
        if (!r)
          return std::move(r.error());
        return std::unique_ptr<detail::stage_port>{std::move(*r)};
      });
    return next;
  }

  /// Starts the stages, each a keylane runtime with `cfg`'s settings
  /// (`max_active_keys` unless the stage sets its concurrency), and
  /// delivers results through `on_output` in `cfg.order` (by the
  /// pipeline's sequence numbers). `cfg.window` bounds the events in the
  /// whole pipeline; `cfg.overflow` says what a full one does to `submit`.
  [[nodiscard]] caf::expected<std::unique_ptr<pipeline<In, Cur>>>
  start(settings cfg,
        std::function<void(pipeline_result<Cur>&)> on_output) && {
    if (auto err = detail::check_pipeline(cfg, specs_))
      return err;
    if (!on_output)
      return make_error(errc::invalid_config,
                        "a pipeline needs an output callback");
    auto deliver = [f = std::move(on_output),
                    names = names()](detail::pipeline_item& it) {
      pipeline_result<Cur> r;
      r.seq = it.seq;
      r.key = std::move(it.k);
      r.status = it.status;
      r.error = std::move(it.error);
      if (it.status == outcome::ok)
        r.result.emplace(
          std::move(static_cast<detail::box<Cur>&>(*it.value).value));
      else
        r.stage = names[it.stage];
      f(r);
    };
    auto core = std::make_unique<detail::pipeline_core>(cfg, specs_,
                                                        std::move(deliver));
    for (size_t i = 0; i < starters_.size(); ++i) {
      auto port = starters_[i](cfg, specs_[i], i, core.get());
      if (!port) {
        core->stop();
        return std::move(port.error());
      }
      core->attach(i, std::move(*port));
    }
    return std::unique_ptr<pipeline<In, Cur>>{
      new pipeline<In, Cur>(std::move(core))};
  }

private:
  template <class, class>
  friend class pipeline_builder;

  using starter = std::function<
    caf::expected<std::unique_ptr<detail::stage_port>>(
      const settings&, const stage_spec&, size_t, detail::pipeline_core*)>;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& s : specs_)
      out.push_back(s.name);
    return out;
  }

  std::vector<stage_spec> specs_;
  std::vector<starter> starters_;
};

/// Runs events through several handler stages in sequence. Each event gets
/// a sequence number once, at `submit`, which survives every stage; every
/// stage ends each event exactly once (a result, which goes on to the next
/// stage, or a tombstone, which skips the rest), so the final
/// re-sequencing never waits forever. An `ordered` stage gets a
/// re-sequencer in front of it.
///
/// Thread-safety: `submit`, `drain` and `stats` may be called from many
/// threads at once; a key's events reach the first stage in the order
/// their `submit` calls returned. The output callback runs on one thread
/// at a time, never concurrently: on the thread whose routing released the
/// result (a stage's consumer thread, or a thread inside `submit`). It must
/// not call `stop`, nor a blocking `submit` (the window's credit returns
/// after it). `stop` is called once,
/// by the owner, or by the destructor.
template <class In, class Out>
class pipeline {
public:
  ~pipeline() {
    if (!stopped_)
      core_->stop();
  }

  /// Submits `input` for `k`. On rejection `input` is left untouched.
  submit_result submit(const key& k, In&& input) {
    detail::boxed b = std::make_unique<detail::box<In>>(std::move(input));
    auto res = core_->submit(k, b);
    if (!res)
      input = std::move(static_cast<detail::box<In>&>(*b).value);
    return res;
  }

  /// Submits a copy of `input` for `k`.
  submit_result submit(const key& k, const In& input) {
    In copy{input};
    return submit(k, std::move(copy));
  }

  /// Waits until every accepted event was delivered; false on timeout.
  [[nodiscard]] bool
  drain(std::chrono::nanoseconds timeout = std::chrono::hours(24 * 365)) {
    return core_->drain(timeout);
  }

  /// Stops every stage and reports the events not delivered.
  stop_report stop() {
    stopped_ = true;
    return core_->stop();
  }

  /// Counters per stage and of the final re-sequencing.
  [[nodiscard]] pipeline_stats stats() const { return core_->stats(); }

private:
  template <class, class>
  friend class pipeline_builder;

  explicit pipeline(std::unique_ptr<detail::pipeline_core> core)
    : core_(std::move(core)) {}

  std::unique_ptr<detail::pipeline_core> core_;
  bool stopped_ = false;
};

} // namespace keylane
