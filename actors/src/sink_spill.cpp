// SPDX-License-Identifier: Apache-2.0
// Spill instead of stall (`sink.spill_path`, global order): a result that
// arrives `window` or more numbers ahead of the one output waits for goes
// to the spill file instead of memory, and is read back when its turn
// comes. Admission stays open meanwhile, so workers run on past a
// straggler; only a full spill file (`sink.spill_max_bytes`, or a disk
// that refuses) holds admission, until output has drained half of it.

#include <string>

#include <caf/all.hpp>

#include "keylane/detail/ingress.hpp"
#include "keylane/detail/logger.hpp"
#include "keylane/detail/output.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/stop_ledger.hpp"
#include "keylane/detail/sink.hpp"
#include "keylane/detail/spill_record.hpp"

namespace keylane::detail {

bool sink::spill_out(event_ptr& ev) {
  spill_record rec;
  rec.seq = ev->seq;
  rec.k = ev->k;
  rec.status = ev->status;
  rec.error = ev->error;
  rec.attempts = ev->attempts;
  rec.park_id = ev->park_id;
  rec.submitted = ev->submitted;
  rec.started = ev->started;
  caf::error err = parts_.ops.spill(*ev, rec.payload, rec.result);
  std::string bytes;
  uint64_t offset = 0;
  if (!err) {
    bytes = encode(rec);
    if (auto at = spill_.file->append(bytes)) {
      offset = *at;
      if (spill_.failed_in_row != 0)
        parts_.log.write(log_level::warning,
                         "spill: writing " + spill_.file->path()
                           + " works again after "
                           + std::to_string(spill_.failed_in_row)
                           + " failed writes");
      spill_.failed_in_row = 0;
    } else {
      err = std::move(at.error());
      ++spill_.write_failures;
      ++spill_.failed_in_row;
      publish();
    }
  }
  if (err) {
    // Kept in memory instead: nothing is lost, but admission waits so
    // memory stops growing.
    if (!spill_.error_logged) {
      spill_.error_logged = true;
      parts_.log.write(log_level::error,
                        "spill: " + render(err)
                          + "; results stay in memory and admission waits "
                            "until output drains");
    }
    if (!spill_.admission_held) {
      spill_.admission_held = true;
      publish();
      parts_.in.hold_admission(true);
    }
    return false;
  }
  spill_.spilled.emplace(rec.seq,
                   spilled_at{offset, static_cast<uint32_t>(bytes.size()),
                              std::move(rec.k)});
  ++spill_.total;
  if (spill_.spilled.size() > spill_.peak_held)
    spill_.peak_held = spill_.spilled.size();
  ev.reset();
  if (!spill_.admission_held && spill_.file->size() >= spill_.max_bytes) {
    spill_.admission_held = true;
    // Whoever sees admission closed must see the file that closed it.
    publish();
    parts_.in.hold_admission(true);
    parts_.log.write(log_level::warning,
                      "spill: " + spill_.file->path() + " reached "
                        + std::to_string(spill_.file->size())
                        + " bytes (sink.spill_max_bytes): admission waits "
                          "until output drains it");
  }
  return true;
}

event_ptr sink::spill_in() {
  auto i = spill_.spilled.begin();
  auto seq = i->first;
  auto at = std::move(i->second);
  spill_.spilled.erase(i);
  auto fail = [&](const caf::error& err) {
    parts_.log.write(log_level::error,
                      "spill: cannot read back seq " + std::to_string(seq)
                        + " (key " + at.k.to_string() + "): " + render(err)
                        + "; it is reported unfinished");
    parts_.ledger.abandon(seq, at.k, "lost in spill");
    parts_.out.forget(1);
    return event_ptr{};
  };
  auto bytes = spill_.file->read(at.offset, at.len);
  if (!bytes)
    return fail(bytes.error());
  auto rec = decode_spill(*bytes);
  if (!rec)
    return fail(rec.error());
  auto ev = parts_.ops.unspill(rec->k, rec->payload, rec->result);
  if (!ev)
    return fail(ev.error());
  auto& e = **ev;
  e.seq = rec->seq;
  e.status = rec->status;
  e.error = std::move(rec->error);
  e.attempts = rec->attempts;
  e.park_id = rec->park_id;
  e.submitted = rec->submitted;
  e.started = rec->started;
  return std::move(*ev);
}

void sink::after_release() {
  if (spill_.spilled.empty())
    spill_.file->clear(); // nothing in it is wanted: start the file over
  if (spill_.admission_held && spill_.file->size() <= spill_.max_bytes / 2
      && !(spill_.error_logged && reorder_.held() > spill_.memory_window)) {
    spill_.admission_held = false;
    spill_.error_logged = false;
    parts_.in.hold_admission(false);
  }
}

} // namespace keylane::detail
