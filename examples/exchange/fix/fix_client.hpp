// SPDX-License-Identifier: Apache-2.0
#pragma once

// The load client's FIX side: N initiator sessions LOAD1..LOADn to the
// exchange (TargetCompID KEYLANE) behind a QuickFIX-free interface.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exchange {
namespace load {

/// The fields of an incoming message the load client looks at.
struct incoming {
  int session = 0;          ///< n of LOADn
  int64_t recv_ns = 0;      ///< steady clock at receipt
  char msg_type = 0;        ///< '8', '9', '3' or 'j'
  char exec_type = 0;       ///< 150
  char ord_status = 0;      ///< 39
  std::string cl_ord_id;    ///< 11
  std::string orig_cl_ord_id; ///< 41
  std::string symbol;       ///< 55
  std::string text;         ///< 58
  int64_t order_qty = 0;    ///< 38
  int64_t cum_qty = 0;      ///< 14
  int64_t last_qty = 0;     ///< 32
  double price = 0;         ///< 44
  int reason = -1;          ///< 103, 102, 373 or 380 by msg_type; -1 if absent
  int ref_seq = 0;          ///< 45 (Reject, BusinessMessageReject)
  int ref_tag = 0;          ///< 371 (Reject)
  uint64_t symbol_seq = 0;  ///< 20001; 0 if absent
};

/// Tag/value pairs of an outgoing message body, in order.
using field_list = std::vector<std::pair<int, std::string>>;

/// A QuickFIX ThreadedSocketInitiator: one reader thread per session.
/// `on_message` is called on the session's thread, one message at a time
/// per session and concurrently across sessions, for every application
/// message and every session-level Reject; `send` may be called from any
/// thread (QuickFIX locks each session) and writes to the socket at once,
/// so a server that does not keep up slows the sender, which the open-loop
/// latency then shows. Not QuickFIX's one-thread SocketInitiator: it queues
/// sends for its thread to flush, and in a 20,000/s run 16,000 of 60,000
/// orders were still queued, never seen by the server, at the drain timeout.
class fix_client {
public:
  using message_fn = std::function<void(const incoming&)>;

  /// Monotonic nanoseconds, the clock of `incoming::recv_ns`.
  static int64_t now_ns();

  fix_client();
  ~fix_client();
  fix_client(const fix_client&) = delete;
  fix_client& operator=(const fix_client&) = delete;

  /// Connects sessions LOAD1..LOAD`sessions`; false with `error` on a
  /// QuickFIX configuration error.
  bool start(const std::string& host, int port, int sessions,
             message_fn on_message, std::string& error);

  /// Waits up to `timeout_s` for every session to log on.
  bool wait_logged_on(double timeout_s);

  /// Sends a message of type `msg_type` with `fields` (and TransactTime,
  /// 60, now, for D, F and G) over LOAD`session`. Returns its MsgSeqNum, or
  /// 0 if the session is not logged on.
  int send(int session, const std::string& msg_type, const field_list& fields);

  /// Sessions logged on now.
  int logged_on() const;

  /// Logouts and disconnects seen since start.
  uint64_t logouts() const;

  /// Session-level Rejects this client sent: server messages QuickFIX
  /// found malformed and did not deliver.
  uint64_t rejects_sent() const;

  /// Logs out and stops; idempotent.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace load
} // namespace exchange
