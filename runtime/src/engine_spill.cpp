// The spill file behind `sink.spill_path`: opened with the runtime, so a
// bad directory or a type without codecs fails the start; admission is held
// while the file is full.

#include "keylane/detail/engine.hpp"

namespace keylane::detail {

caf::error engine::open_spill() {
  if (cfg_.spill_path.empty())
    return caf::none;
  if (!ops_.spills)
    return make_error(errc::invalid_config,
                      "sink.spill_path = \"" + cfg_.spill_path
                        + "\" needs a keylane::codec for the payload and the "
                          "result types (declare inspect() next to each type; "
                          "see codec.hpp)");
  auto f = spill_file::open(cfg_.spill_path);
  if (!f)
    return std::move(f.error());
  spill_ = std::move(*f);
  return caf::none;
}

void engine::abandon(uint64_t seq, const key& k, const char* stage) {
  std::lock_guard<std::mutex> guard{abandoned_mtx_};
  abandoned_.push_back(unfinished_event{seq, k, stage});
}

void engine::forget(size_t n) {
  in_flight_.fetch_sub(n, std::memory_order_seq_cst);
  lost_.fetch_add(n, std::memory_order_seq_cst);
  { std::lock_guard<std::mutex> guard{wait_mtx_}; } // orders after waiters' checks
  wait_cv_.notify_all();
}

void engine::hold_admission(bool hold) {
  // A zero window admits nothing; `unbounded` is what spill runs with.
  resize_window(hold ? 0 : unbounded);
}

} // namespace keylane::detail
