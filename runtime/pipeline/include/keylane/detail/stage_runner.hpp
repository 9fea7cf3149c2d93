// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <utility>

#include <caf/expected.hpp>

#include "keylane/detail/pipeline_core.hpp"
#include "keylane/detail/stage_adapter.hpp"
#include "keylane/runtime.hpp"
#include "keylane/stage.hpp"

namespace keylane::detail {

/// Builds one handler for one lane of a stage.
template <class A, class B>
using stage_factory = std::function<std::unique_ptr<handler<A, B>>()>;

/// The settings of a stage's runtime: the pipeline's, with the bounds left
/// to the pipeline (its window bounds every stage) and completion order
/// (the pipeline re-sequences).
[[nodiscard]] settings stage_settings(const settings& pipeline,
                                      const stage_spec& spec);

/// One stage: a keylane runtime whose output the pipeline core routes.
template <class A, class B>
class stage_runner final : public stage_port {
public:
  using payload = staged<A>;
  using runtime_type = runtime<payload, B>;

  [[nodiscard]] static caf::expected<std::unique_ptr<stage_runner>>
  start(const settings& cfg, const stage_spec& spec, size_t index,
        stage_factory<A, B> make, pipeline_core* core) {
    bool keyed = spec.kind != stage_kind::unordered;
    handler_factory hf = [make = std::move(make), keyed](
                           const handler_params&) {
      return std::unique_ptr<handler_base>{
        new stage_adapter<A, B>(make(), keyed)};
    };
    auto on_output = [core, index](typename runtime_type::event_type& e) {
      pipeline_item it;
      it.seq = e.payload.seq;
      it.k = std::move(e.payload.k);
      it.status = e.status;
      it.error = std::move(e.error);
      if (e.status == outcome::ok && e.result)
        it.value = std::make_unique<box<B>>(std::move(*e.result));
      else if (e.status == outcome::ok)
        it.status = outcome::failed; // defensive: ok always carries a result
      core->finished(index, std::move(it));
    };
    auto rt = runtime_type::start(stage_settings(cfg, spec), std::move(hf),
                                  std::move(on_output));
    if (!rt)
      return std::move(rt.error());
    return std::unique_ptr<stage_runner>{
      new stage_runner(std::move(*rt), keyed)};
  }

  errc submit(pipeline_item& it) override {
    auto& in = static_cast<box<A>&>(*it.value).value;
    payload p{it.seq, it.k, std::move(in)};
    // An unordered stage runs each event in a lane of its own.
    auto res = keyed_ ? rt_->submit(it.k, std::move(p))
                      : rt_->submit(key{it.seq}, std::move(p));
    if (!res) {
      in = std::move(p.value); // a rejected payload is left untouched
      return res.code();
    }
    return errc::none;
  }

  void stop() override { rt_->stop(); }

private:
  stage_runner(std::unique_ptr<runtime_type> rt, bool keyed)
    : rt_(std::move(rt)), keyed_(keyed) {}

  std::unique_ptr<runtime_type> rt_;
  bool keyed_;
};

} // namespace keylane::detail
