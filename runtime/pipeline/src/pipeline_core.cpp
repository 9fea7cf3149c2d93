// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/pipeline_core.hpp"

#include <utility>

namespace keylane {

const char* to_string(stage_kind x) noexcept {
  switch (x) {
    case stage_kind::unordered: return "unordered";
    case stage_kind::keyed: return "keyed";
    case stage_kind::ordered: return "ordered";
  }
  return "unknown";
}

} // namespace keylane

namespace keylane::detail {

pipeline_core::pipeline_core(const settings& cfg,
                             std::vector<stage_spec> stages,
                             deliver_fn deliver)
  : window_(cfg.window),
    block_(cfg.overflow == overflow_policy::block),
    deliver_(std::move(deliver)),
    final_(cfg.order) {
  stages_.reserve(stages.size());
  for (auto& spec : stages) {
    stage_state st;
    st.counts.name = spec.name;
    st.counts.kind = spec.kind;
    auto mode = spec.resequence;
    if (spec.kind == stage_kind::ordered && mode == order_mode::none)
      mode = order_mode::per_key;
    if (mode != order_mode::none)
      st.front = std::make_unique<reorder_buffer<pipeline_item>>(mode);
    st.spec = std::move(spec);
    stages_.push_back(std::move(st));
  }
}

void pipeline_core::attach(size_t i, std::unique_ptr<stage_port> port) {
  stages_.at(i).port = std::move(port);
}

submit_result pipeline_core::submit(const key& k, boxed& input) {
  lock guard{mtx_};
  auto room = [this] {
    return stopping_ || next_seq_ - delivered_ < window_;
  };
  if (!room()) {
    if (!block_)
      return submit_result::rejected(errc::window_full);
    cv_.wait(guard, room);
  }
  if (stopping_)
    return submit_result::rejected(errc::stopped);
  // Sequence numbers, turns and the first stage's submit under one lock:
  // a key's events reach the first stage in sequence order.
  auto seq = next_seq_++;
  open_.emplace(seq, k);
  for (auto& st : stages_)
    if (st.front)
      st.front->expect(seq, k);
  final_.expect(seq, k);
  pipeline_item it;
  it.seq = seq;
  it.k = k;
  it.value = std::move(input);
  enter(0, std::move(it));
  deliver_ready(guard);
  return submit_result::accepted(seq);
}

void pipeline_core::finished(size_t i, pipeline_item it) {
  lock guard{mtx_};
  if (stopping_)
    return; // stays in open_: reported by stop()
  auto& c = stages_[i].counts;
  switch (it.status) {
    case outcome::ok: ++c.ok; break;
    case outcome::skipped: ++c.skipped; break;
    case outcome::parked: ++c.parked; break;
    default: ++c.failed; break;
  }
  if (it.status != outcome::ok) {
    it.value.reset();
    it.stage = i;
    if (!it.error.empty())
      it.error = stages_[i].spec.name + ": " + it.error;
  }
  enter(i + 1, std::move(it));
  deliver_ready(guard);
}

void pipeline_core::enter(size_t j, pipeline_item it) {
  if (j == stages_.size()) {
    if (it.status == outcome::ok)
      it.stage = j;
    final_.arrive(it.seq, std::move(it), ready_);
    return;
  }
  auto& st = stages_[j];
  if (!st.front) {
    pass(j, std::move(it));
    return;
  }
  batch turn;
  st.front->arrive(it.seq, std::move(it), turn);
  for (auto& x : turn)
    pass(j, std::move(x));
}

void pipeline_core::pass(size_t j, pipeline_item it) {
  if (it.status != outcome::ok) {
    enter(j + 1, std::move(it));
    return;
  }
  auto code = stages_[j].port->submit(it);
  if (code == errc::none) {
    ++stages_[j].counts.entered;
    return;
  }
  fail(j, std::move(it), code);
}

void pipeline_core::fail(size_t j, pipeline_item it, errc code) {
  // A stage refused the event (it is stopping, or a bound was hit that
  // the pipeline's window should have kept it from): end it as a failed
  // tombstone, so the output behind it never waits for it.
  ++stages_[j].counts.failed;
  it.value.reset();
  it.status = outcome::failed;
  it.stage = j;
  it.error = stages_[j].spec.name + ": refused by the stage ("
             + to_string(code) + ")";
  enter(j + 1, std::move(it));
}

void pipeline_core::deliver_ready(lock& guard) {
  // One thread delivers at a time, in release order; others leave their
  // results to it, so the callback never runs concurrently or under the
  // lock.
  if (delivering_)
    return;
  delivering_ = true;
  while (!ready_.empty() && !stopping_) {
    batch out;
    out.swap(ready_);
    guard.unlock();
    for (auto& it : out)
      deliver_(it);
    guard.lock();
    delivered_ += out.size();
    for (auto& it : out)
      open_.erase(it.seq);
    cv_.notify_all();
  }
  delivering_ = false;
  cv_.notify_all();
}

bool pipeline_core::drain(std::chrono::nanoseconds timeout) {
  lock guard{mtx_};
  return cv_.wait_for(guard, timeout, [this] {
    return delivered_ == next_seq_ && !delivering_;
  });
}

stop_report pipeline_core::stop() {
  {
    lock guard{mtx_};
    stopping_ = true;
    cv_.notify_all();
    // A delivery in progress finishes its batch before stop goes on.
    cv_.wait(guard, [this] { return !delivering_; });
  }
  for (auto& st : stages_)
    if (st.port)
      st.port->stop();
  lock guard{mtx_};
  stop_report rep;
  rep.accepted = next_seq_;
  rep.delivered = delivered_;
  for (auto& [seq, k] : open_)
    rep.unfinished.push_back(unfinished_event{seq, k, "pipeline", false});
  return rep;
}

pipeline_stats pipeline_core::stats() const {
  lock guard{mtx_};
  pipeline_stats out;
  out.accepted = next_seq_;
  out.delivered = delivered_;
  for (auto& st : stages_) {
    auto c = st.counts;
    if (st.front) {
      c.held = st.front->held();
      c.peak_held = st.front->peak();
    }
    out.stages.push_back(std::move(c));
  }
  out.held = final_.held();
  out.peak_held = final_.peak();
  return out;
}

} // namespace keylane::detail
