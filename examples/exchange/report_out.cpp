// SPDX-License-Identifier: Apache-2.0
#include "report_out.hpp"

namespace exchange {

void report_out::deliver(const order_request& rq, uint64_t seq,
                         const std::string& risk,
                         const std::vector<exec_report>& reports) {
  std::lock_guard<std::mutex> guard{mtx_};
  ++counts_.requests;
  if (seq == 0)
    ++counts_.early_rejects;
  if (!risk.empty())
    ++counts_.risk_rejects;
  if (seq != 0 && journal_.is_open())
    journal_.order({seq, rq, risk});
  for (auto& r : reports) {
    ++counts_.reports;
    if (r.kind == report_kind::fill || r.kind == report_kind::partial_fill)
      ++counts_.fills;
    if (!r.exec_id.empty()) {
      journal_.report(seq, r);
      send_(r);
      continue;
    }
    // A reject from outside any book: ExecID (17) is required all the same.
    auto copy = r;
    copy.exec_id = "X" + std::to_string(++unbooked_reports_);
    journal_.report(seq, copy);
    send_(copy);
  }
}

void report_out::note_failure() {
  std::lock_guard<std::mutex> guard{mtx_};
  ++counts_.failures;
}

report_counts report_out::counts() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return counts_;
}

} // namespace exchange
