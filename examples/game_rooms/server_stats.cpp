// SPDX-License-Identifier: Apache-2.0
#include "server_stats.hpp"

namespace game {

std::string server_stats::json() const {
  std::string out = "{";
  auto add = [&](const char* name, const std::atomic<uint64_t>& x) {
    if (out.size() > 1)
      out += ",";
    out += "\"";
    out += name;
    out += "\":" + std::to_string(x.load());
  };
  add("connections", connections);
  add("pages_served", pages_served);
  add("joins", joins);
  add("rooms_full", rooms_full);
  add("unknown_room", unknown_room);
  add("bad_frames", bad_frames);
  add("oversized", oversized);
  add("slow_dropped", slow_dropped);
  add("busy", busy);
  add("transfers", transfers);
  add("transfers_refused", transfers_refused);
  add("transfer_retries", transfer_retries);
  add("leave_retries", leave_retries);
  add("ticks_rejected", ticks_rejected);
  add("ticks_late", ticks_late);
  add("ticks_skipped", ticks_skipped);
  add("occupied_retired", occupied_retired);
  add("keylane_threads", keylane_threads);
  add("io_threads", io_threads);
  return out + "}";
}

} // namespace game
