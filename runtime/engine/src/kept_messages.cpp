// SPDX-License-Identifier: Apache-2.0
// Messages that senders' written state still keeps, sent again when a
// runtime starts: the run that kept them may have died before their
// targets' state held them. A target that has them drops them. Timers a
// key kept for itself are armed again for what is left of their delay.

#include "kept_messages.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "keylane/detail/logger.hpp"
#include "keylane/detail/messaging.hpp"
#include "keylane/detail/payload_ops.hpp"
#include "keylane/detail/state_record.hpp"
#include "keylane/state_store.hpp"

namespace keylane::detail {

namespace {
// The version byte of a record that may keep messages (state_record.cpp):
// the others are skipped without decoding them.
constexpr size_t version_at = 4;
constexpr char version_messages = 2;
} // namespace

caf::expected<size_t> resend_kept_messages(state_store& store, messaging& msg,
                                           const payload_ops& ops, logger& log,
                                           const arm_fn& arm) {
  if (!ops.revive_message)
    return size_t{0}; // no payload codec: nothing was ever kept
  size_t sent = 0;
  auto err = store.scan([&](const key& k, std::string_view bytes) {
    if (bytes.size() <= version_at || bytes[version_at] != version_messages)
      return true;
    auto rec = decode_state_record(bytes);
    if (!rec) {
      // The key's lane refuses to load it too, so its events park (or
      // fail) with the reason; the other keys start as usual.
      log.write(log_level::error,
                "messaging: the state of key " + k.to_string()
                  + " cannot be read, so the messages it keeps are not "
                    "sent again: "
                  + render(rec.error()));
      return true;
    }
    auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
    // Messages in their order, then timers in due order: those due
    // already are sent now, and must fire in that order too.
    std::stable_sort(rec->outbox.begin(), rec->outbox.end(),
                     [](const kept_message& a, const kept_message& b) {
                       return a.due_ms < b.due_ms;
                     });
    for (auto& m : rec->outbox) {
      bool timer = m.due_ms != 0;
      auto ev = ops.revive_message(m.to, m.payload,
                                   message_origin{k, m.number, timer});
      if (!ev) {
        log.write(log_level::error,
                  "messaging: message " + std::to_string(m.number)
                    + " of key " + k.to_string() + " to key "
                    + m.to.to_string()
                    + " cannot be decoded, so it is not sent again: "
                    + render(ev.error()));
        continue;
      }
      ++sent;
      if (timer && m.due_ms > now) {
        arm(msg.put_timer(0, std::move(*ev)),
            std::chrono::milliseconds(m.due_ms - now));
        continue;
      }
      msg.send_due(std::move(*ev));
    }
    return true;
  });
  if (err)
    return err;
  return sent;
}

} // namespace keylane::detail
