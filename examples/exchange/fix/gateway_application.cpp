// SPDX-License-Identifier: Apache-2.0
#include "gateway_application.hpp"

#include <cstdlib>
#include <iostream>

#include <quickfix/FieldNumbers.h>

#include "report_encoder.hpp"
#include "request_decoder.hpp"

namespace exchange {
namespace fix {

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
    [this, session] {
      ++slow_cut_;
      session->disconnect();
    }));
}

void gateway_application::stop_sending() {
  for (slot& s : slots_)
    if (s.outbox)
      s.outbox->stop();
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
    if (slots_[n].outbox)
      slots_[n].outbox->reset();
    slots_[n].up.store(true, std::memory_order_release);
  }
  ++logons_;
  ++logged_on_;
}

void gateway_application::onLogout(const FIX::SessionID& id) {
  int n = session_index(id.getTargetCompID().getValue());
  // QuickFIX calls onLogout on a disconnect too, also for a session that
  // never logged on; count only the ones that were up.
  if (n >= 0 && slots_[n].up.exchange(false))
    --logged_on_;
  ++logouts_;
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
