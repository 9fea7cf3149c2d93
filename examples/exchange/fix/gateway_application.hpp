// SPDX-License-Identifier: Apache-2.0
#pragma once

// The QuickFIX application behind fix_gateway: decodes requests, hands them
// to the matcher, and sends the matcher's reports. C++14 and QuickFIX.

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include <quickfix/Application.h>
#include <quickfix/Session.h>

#include "fix_gateway.hpp"
#include "session_outbox.hpp"

namespace exchange {
namespace fix {

/// The session index of a client CompID: "LOAD7" -> 7, from its trailing
/// digits; -1 if it has none or the number is out of range.
int session_index(const std::string& comp_id);

/// QuickFIX callbacks of the acceptor. fix_acceptor calls them on its one
/// thread, for every session, one message at a time, so requests reach
/// `on_request` in each session's order. `send` may be called from any
/// thread: QuickFIX's Session::send takes the session's lock and the
/// fix_connection writes what the socket takes and keeps the rest, under
/// a lock of its own, for the acceptor's thread to write; it never waits. Because
/// nothing waits, a client that does not read is found out by asking: each
/// outbox sends a TestRequest every `probe_every` reports and, before the
/// next one, waits for the client's Heartbeat answering the last, so at
/// most two rounds are unread and a full outbox means the client is not
/// reading. The session table is filled by `attach` before the acceptor
/// starts and only read afterwards.
class gateway_application : public FIX::Application {
public:
  /// The highest session index the table holds (LOAD1..LOAD64).
  static constexpr int max_sessions = 64;

  /// Reports between two TestRequests of an outbox (see above).
  static constexpr uint32_t probe_every = 256;

  /// `session_queue`: the most reports held for one session whose client
  /// does not read (see session_outbox); 0: no outboxes, `send` hands
  /// reports to QuickFIX itself, which keeps what a client does not read
  /// without a bound.
  gateway_application(fix_gateway::request_fn on_request, size_t session_queue);
  ~gateway_application() override { stop_sending(); }

  /// Registers QuickFIX's session object for `id`; call before start.
  void attach(const FIX::SessionID& id, FIX::Session* session);

  /// Queues `r` for its session, or counts it unsent if that session is
  /// unknown or not logged on, or dropped if its client does not read.
  void send(const exec_report& r);

  /// Marks every session down and ends the sessions' sender threads;
  /// after the acceptor stopped, before QuickFIX's sessions go.
  void stop_sending();

  /// A snapshot of the counters.
  gateway_stats stats() const;

  /// Sessions logged on now.
  int logged_on() const noexcept { return logged_on_.load(); }

  // FIX::Application: logons and logouts keep the session table's `up`
  // flags; toAdmin/toApp count the rejects QuickFIX and we send; fromAdmin
  // takes the Heartbeats answering the outboxes' TestRequests; fromApp
  // decodes D, F and G, answers a missing tag with a Reject (373=1) and
  // throws UnsupportedMessageType for anything else (QuickFIX answers 35=j).
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& id) override;
  void onLogout(const FIX::SessionID& id) override;
  void toAdmin(FIX::Message& msg, const FIX::SessionID&) override;
  void toApp(FIX::Message& msg, const FIX::SessionID&)
    throw(FIX::DoNotSend) override;
  void fromAdmin(const FIX::Message& msg, const FIX::SessionID& id)
    throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
          FIX::RejectLogon) override;
  void fromApp(const FIX::Message& msg, const FIX::SessionID& id)
    throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
          FIX::UnsupportedMessageType) override;

private:
  struct slot {
    FIX::Session* session = nullptr;
    std::atomic<bool> up{false};
    std::atomic<bool> was_cut{false};  // logged out for not reading; re-enable
    std::unique_ptr<session_outbox> outbox;
    uint32_t since_probe = 0;      // outbox thread only
    std::mutex probe_m;
    std::condition_variable probe_cv;
    uint64_t logon = 0;            // logons so far; under probe_m
    uint64_t probes_sent = 0;      // since the logon; under probe_m
    uint64_t probes_answered = 0;  // since the logon; under probe_m
  };

  void send_now(slot& s, const exec_report& r);
  void probe(slot& s);
  void cut(slot& s);
  void wake_prober(slot& s);

  void reject_missing(const FIX::Message& msg, FIX::Session* session,
                      int tag, const char* name);

  fix_gateway::request_fn on_request_;
  const size_t session_queue_;
  std::array<slot, max_sessions + 1> slots_;
  std::atomic<int> logged_on_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> reports_{0};
  std::atomic<uint64_t> session_rejects_{0};
  std::atomic<uint64_t> business_rejects_{0};
  std::atomic<uint64_t> logons_{0};
  std::atomic<uint64_t> logouts_{0};
  std::atomic<uint64_t> unsent_{0};
  std::atomic<uint64_t> slow_dropped_{0};
  std::atomic<uint64_t> slow_cut_{0};
  std::atomic<uint64_t> exec_ids_{0};  // for reports the matcher left without one
};

} // namespace fix
} // namespace exchange
