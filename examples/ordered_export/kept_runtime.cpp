// SPDX-License-Identifier: Apache-2.0
#include "kept_runtime.hpp"

#include <utility>

namespace ordered_export {

void kept_runtime::keep(std::unique_ptr<export_runtime> rt, mode m) {
  stop();
  std::lock_guard<std::mutex> guard{mtx_};
  rt_ = std::move(rt);
  mode_ = std::move(m);
}

bool kept_runtime::visit(
  const std::function<void(export_runtime&, const mode&)>& f) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (!rt_)
    return false;
  f(*rt_, mode_);
  return true;
}

void kept_runtime::stop() {
  std::unique_ptr<export_runtime> rt;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    rt = std::move(rt_);
  }
  if (rt)
    rt->stop();
}

} // namespace ordered_export
