// SPDX-License-Identifier: Apache-2.0
// Baseline 1: one thread does everything, inline in `submit` — the limit
// for one core, with per-key order for free.

#include "../way.hpp"

namespace keylane::bench {

namespace {

class single_loop final : public way {
public:
  std::string start(output& out, uint64_t work_iters) override {
    out_ = &out;
    iters_ = work_iters;
    return {};
  }

  bool submit(const item& it) override {
    out_->deliver(it, do_work(it, iters_));
    return true;
  }

  std::string stop() override { return {}; }

private:
  output* out_ = nullptr;
  uint64_t iters_ = 0;
};

} // namespace

std::unique_ptr<way> make_single_loop() {
  return std::make_unique<single_loop>();
}

} // namespace keylane::bench
