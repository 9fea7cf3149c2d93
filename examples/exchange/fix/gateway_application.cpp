// SPDX-License-Identifier: Apache-2.0
#include "gateway_application.hpp"

#include <cstdlib>
#include <iostream>

#include <quickfix/FieldNumbers.h>
#include <quickfix/FixFieldNumbers.h>

#include "report_encoder.hpp"
#include "request_decoder.hpp"

namespace exchange {
namespace fix {

namespace {

// TestReqID of the outboxes' TestRequests; QuickFIX's own say "TEST".
const char probe_prefix[] = "KLP";

} // namespace

int session_index(const std::string& comp_id) {
  size_t i = comp_id.size();
  while (i > 0 && comp_id[i - 1] >= '0' && comp_id[i - 1] <= '9')
    --i;
  if (i == comp_id.size() || comp_id.size() - i > 3)
    return -1;
  int n = std::atoi(comp_id.c_str() + i);
  return n >= 0 && n <= gateway_application::max_sessions ? n : -1;
}

gateway_application::gateway_application(fix_gateway::request_fn on_request,
                                         size_t session_queue)
  : on_request_(std::move(on_request)), session_queue_(session_queue) {}

void gateway_application::attach(const FIX::SessionID& id,
                                 FIX::Session* session) {
  int n = session_index(id.getTargetCompID().getValue());
  if (n < 0)
    return;
  slot& s = slots_[n];
  s.session = session;
  if (session_queue_ == 0)
    return; // reports go out from the caller's thread
  s.outbox.reset(new session_outbox(
    session_queue_, [this, &s](const exec_report& r) { send_now(s, r); },
    [this, &s] { cut(s); }));
}

void gateway_application::stop_sending() {
  for (slot& s : slots_) {
    s.up.store(false, std::memory_order_release);
    wake_prober(s);
  }
  for (slot& s : slots_)
    if (s.outbox)
      s.outbox->stop();
}

// After `up` changed: a prober waiting for an answer that cannot come now
// must see it. Taking the lock orders the store before its next check.
void gateway_application::wake_prober(slot& s) {
  { std::lock_guard<std::mutex> lock(s.probe_m); }
  s.probe_cv.notify_all();
}

void gateway_application::send(const exec_report& r) {
  if (r.session < 0 || r.session > max_sessions) {
    ++unsent_;
    return;
  }
  slot& s = slots_[r.session];
  // QuickFIX would keep a report for a session that is down in its store
  // and drop it at the next logon (ResetOnLogon=Y): count it instead.
  if (s.session == nullptr || !s.up.load(std::memory_order_acquire)) {
    ++unsent_;
    return;
  }
  if (!s.outbox) {
    send_now(s, r);
    return;
  }
  switch (s.outbox->push(r)) {
    case session_outbox::pushed::queued: break;
    case session_outbox::pushed::dropped: ++slow_dropped_; break;
    case session_outbox::pushed::stopped: ++unsent_; break;
  }
}

// On the session's outbox thread (or the caller's, with no outboxes).
void gateway_application::send_now(slot& s, const exec_report& r) {
  if (!s.up.load(std::memory_order_acquire)) {
    ++unsent_;
    return;
  }
  FIX::Message m = encode_report(r, ++exec_ids_);
  if (s.session->send(m))
    ++reports_;
  else
    ++unsent_;
  if (s.outbox && ++s.since_probe >= probe_every)
    probe(s);
}

// On the session's outbox thread: sends TestRequest n, then waits until
// n - 1 is answered (or the session goes down), so this thread, like a
// blocked send, stops taking reports from the queue while its client does
// not read.
void gateway_application::probe(slot& s) {
  s.since_probe = 0;
  uint64_t n = 0;
  uint64_t logon = 0;
  {
    std::lock_guard<std::mutex> lock(s.probe_m);
    n = ++s.probes_sent;
    logon = s.logon;
  }
  FIX::Message t;
  t.getHeader().setField(FIX::FIELD::MsgType, "1");
  t.setField(FIX::FIELD::TestReqID, probe_prefix + std::to_string(n));
  s.session->send(t);
  std::unique_lock<std::mutex> lock(s.probe_m);
  s.probe_cv.wait(lock, [&] {
    return s.probes_answered + 1 >= n || s.logon != logon
           || !s.up.load(std::memory_order_acquire);
  });
}

// On the session's outbox thread, once reports were dropped. The
// acceptor's sockets belong to its thread (closing one here would race
// with its reads), so the session is logged out instead: QuickFIX sends
// the Logout from that thread and closes the connection when no answer
// comes in LogoutTimeout. Logout also disables the session, which would
// refuse the client's next logon, so whoever sees it down re-enables it.
// Session::logout and logon set two fields without the session's lock;
// QuickFIX's own Acceptor::stop calls logout from another thread the same way.
void gateway_application::cut(slot& s) {
  ++slow_cut_;
  s.was_cut.store(true);
  if (s.up.load(std::memory_order_acquire))
    s.session->logout("reports dropped: the client does not read");
  if (!s.up.load(std::memory_order_acquire))
    s.session->logon(); // down before or meanwhile: onLogout may have missed it
}

gateway_stats gateway_application::stats() const {
  gateway_stats st;
  st.requests = requests_.load();
  st.reports = reports_.load();
  st.session_rejects = session_rejects_.load();
  st.business_rejects = business_rejects_.load();
  st.logons = logons_.load();
  st.logouts = logouts_.load();
  st.unsent = unsent_.load();
  st.slow_dropped = slow_dropped_.load();
  st.slow_cut = slow_cut_.load();
  return st;
}

void gateway_application::onLogon(const FIX::SessionID& id) {
  int n = session_index(id.getTargetCompID().getValue());
  if (n >= 0) {
    slot& s = slots_[n];
    if (s.outbox)
      s.outbox->reset();
    {
      std::lock_guard<std::mutex> lock(s.probe_m);
      ++s.logon;
      s.probes_sent = 0;
      s.probes_answered = 0;
    }
    s.probe_cv.notify_all();
    s.up.store(true, std::memory_order_release);
  }
  ++logons_;
  ++logged_on_;
}

void gateway_application::onLogout(const FIX::SessionID& id) {
  int n = session_index(id.getTargetCompID().getValue());
  // QuickFIX calls onLogout on a disconnect too, also for a session that
  // never logged on; count only the ones that were up.
  if (n >= 0) {
    slot& s = slots_[n];
    if (s.up.exchange(false))
      --logged_on_;
    wake_prober(s);
    if (s.was_cut.exchange(false) && s.session != nullptr)
      s.session->logon();
  }
  ++logouts_;
}

// A Heartbeat answering an outbox's TestRequest: the client has read
// everything sent before it.
void gateway_application::fromAdmin(const FIX::Message& msg,
                                    const FIX::SessionID& id)
  throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::RejectLogon) {
  if (msg.getHeader().getField(FIX::FIELD::MsgType) != "0"
      || !msg.isSetField(FIX::FIELD::TestReqID))
    return;
  const std::string& req = msg.getField(FIX::FIELD::TestReqID);
  const size_t prefix = sizeof(probe_prefix) - 1;
  if (req.compare(0, prefix, probe_prefix) != 0)
    return;
  const int n = session_index(id.getTargetCompID().getValue());
  if (n < 0)
    return;
  const uint64_t answered = std::strtoull(req.c_str() + prefix, nullptr, 10);
  slot& s = slots_[n];
  {
    std::lock_guard<std::mutex> lock(s.probe_m);
    if (answered > s.probes_answered && answered <= s.probes_sent)
      s.probes_answered = answered;
  }
  s.probe_cv.notify_all();
}

// Rejects QuickFIX generates itself pass through here and toApp, so the
// counters include them.
void gateway_application::toAdmin(FIX::Message& msg, const FIX::SessionID&) {
  const std::string& type = msg.getHeader().getField(FIX::FIELD::MsgType);
  if (type == "3")
    ++session_rejects_;
}

void gateway_application::toApp(FIX::Message& msg, const FIX::SessionID&)
  throw(FIX::DoNotSend) {
  const std::string& type = msg.getHeader().getField(FIX::FIELD::MsgType);
  if (type == "j")
    ++business_rejects_;
}

void gateway_application::fromApp(const FIX::Message& msg,
                                  const FIX::SessionID& id)
  throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
        FIX::UnsupportedMessageType) {
  const std::string& type = msg.getHeader().getField(FIX::FIELD::MsgType);
  if (type.size() != 1 || (type[0] != 'D' && type[0] != 'F' && type[0] != 'G'))
    throw FIX::UnsupportedMessageType(type);
  missing_field missing = find_missing(msg, type[0]);
  const int n = session_index(id.getTargetCompID().getValue());
  if (missing.tag != 0) {
    reject_missing(msg, n >= 0 ? slots_[n].session : nullptr, missing.tag,
                   missing.name);
    return;
  }
  order_request r = decode_request(msg, type[0], n);
  ++requests_;
  // An exception escaping here would end the connection's thread inside
  // QuickFIX; the matcher's bugs must not take a session down.
  try {
    on_request_(std::move(r));
  } catch (const std::exception& e) {
    std::cerr << "fix_gateway: on_request threw: " << e.what() << '\n';
  }
}

// A FieldNotFound thrown from fromApp makes QuickFIX 1.15 answer a FIX 4.4
// application message with a BusinessMessageReject (35=j 380=5
// "Conditionally Required Field Missing (55)"), not a session-level Reject
// (measured); a missing required tag is a session-level error
// (373=1, as QuickFIX's own data dictionary reports it), so the gateway
// writes that Reject itself. The incoming sequence number still advances:
// fromApp returns normally.
void gateway_application::reject_missing(const FIX::Message& msg,
                                         FIX::Session* session, int tag,
                                         const char* name) {
  if (session == nullptr)
    return;
  FIX::Message rej;
  rej.getHeader().setField(FIX::FIELD::MsgType, "3");
  rej.setField(FIX::FIELD::RefSeqNum, msg.getHeader().getField(FIX::FIELD::MsgSeqNum));
  rej.setField(FIX::FIELD::RefTagID, std::to_string(tag));
  rej.setField(FIX::FIELD::RefMsgType, msg.getHeader().getField(FIX::FIELD::MsgType));
  rej.setField(FIX::FIELD::SessionRejectReason, "1");
  rej.setField(FIX::FIELD::Text, std::string("Required tag missing: ") + name
                                   + " (" + std::to_string(tag) + ")");
  session->send(rej);
}

} // namespace fix
} // namespace exchange
