// SPDX-License-Identifier: Apache-2.0
#include "fix_client.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <quickfix/Application.h>
#include <quickfix/FieldNumbers.h>
#include <quickfix/Fields.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/ThreadedSocketInitiator.h>

namespace exchange {
namespace load {

namespace {

constexpr int max_sessions = 16;

int session_of(const FIX::SessionID& id) {
  const std::string& c = id.getSenderCompID().getValue();
  return c.size() > 4 ? std::atoi(c.c_str() + 4) : 0;
}

std::string get(const FIX::FieldMap& m, int tag) {
  return m.isSetField(tag) ? m.getField(tag) : std::string{};
}
char get_char(const FIX::FieldMap& m, int tag) {
  std::string v = get(m, tag);
  return v.empty() ? '\0' : v[0];
}
int64_t get_int(const FIX::FieldMap& m, int tag, int64_t fallback = 0) {
  std::string v = get(m, tag);
  return v.empty() ? fallback : static_cast<int64_t>(std::strtod(v.c_str(), nullptr));
}

incoming decode(const FIX::Message& m, int session, char type) {
  incoming in;
  in.session = session;
  in.recv_ns = fix_client::now_ns();
  in.msg_type = type;
  in.exec_type = get_char(m, FIX::FIELD::ExecType);
  in.ord_status = get_char(m, FIX::FIELD::OrdStatus);
  in.cl_ord_id = get(m, FIX::FIELD::ClOrdID);
  in.orig_cl_ord_id = get(m, FIX::FIELD::OrigClOrdID);
  in.symbol = get(m, FIX::FIELD::Symbol);
  in.text = get(m, FIX::FIELD::Text);
  in.order_qty = get_int(m, FIX::FIELD::OrderQty);
  in.cum_qty = get_int(m, FIX::FIELD::CumQty);
  in.last_qty = get_int(m, FIX::FIELD::LastQty);
  in.price = std::strtod(get(m, FIX::FIELD::Price).c_str(), nullptr);
  int reason_tag = type == '8'   ? FIX::FIELD::OrdRejReason
                   : type == '9' ? FIX::FIELD::CxlRejReason
                   : type == '3' ? FIX::FIELD::SessionRejectReason
                                 : FIX::FIELD::BusinessRejectReason;
  in.reason = static_cast<int>(get_int(m, reason_tag, -1));
  in.ref_seq = static_cast<int>(get_int(m, FIX::FIELD::RefSeqNum));
  in.ref_tag = static_cast<int>(get_int(m, FIX::FIELD::RefTagID));
  in.symbol_seq = static_cast<uint64_t>(get_int(m, 20001));
  return in;
}

// Callbacks of the sessions' reader threads, concurrently across sessions.
class client_application : public FIX::Application {
public:
  fix_client::message_fn on_message;
  std::atomic<int> up{0};
  std::atomic<uint64_t> logouts{0};
  std::atomic<bool> session_up[max_sessions + 1] = {};

  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& id) override {
    int n = session_of(id);
    if (n > 0 && n <= max_sessions && !session_up[n].exchange(true))
      ++up;
  }
  void onLogout(const FIX::SessionID& id) override {
    int n = session_of(id);
    if (n > 0 && n <= max_sessions && session_up[n].exchange(false)) {
      --up;
      ++logouts;
    }
  }
  std::atomic<uint64_t> rejects_sent{0};

  // A Reject we send means the server's message was malformed (QuickFIX
  // drops it before fromApp): count it, the report never arrives.
  void toAdmin(FIX::Message& m, const FIX::SessionID&) override {
    if (get(m.getHeader(), FIX::FIELD::MsgType) == "3")
      ++rejects_sent;
  }
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& m, const FIX::SessionID& id)
    throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
          FIX::RejectLogon) override {
    if (get(m.getHeader(), FIX::FIELD::MsgType) == "3")
      on_message(decode(m, session_of(id), '3'));
  }
  void fromApp(const FIX::Message& m, const FIX::SessionID& id)
    throw(FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
          FIX::UnsupportedMessageType) override {
    std::string type = get(m.getHeader(), FIX::FIELD::MsgType);
    if (type.size() == 1)
      on_message(decode(m, session_of(id), type[0]));
  }
};

std::string client_settings(const std::string& host, int port, int sessions) {
  std::ostringstream s;
  s << "[DEFAULT]\nConnectionType=initiator\nBeginString=FIX.4.4\n"
       "TargetCompID=KEYLANE\nSocketConnectHost=" << host
    << "\nSocketConnectPort=" << port
    << "\nHeartBtInt=30\nReconnectInterval=1\nStartTime=00:00:00\n"
       "EndTime=00:00:00\nResetOnLogon=Y\nResetOnLogout=Y\nResetOnDisconnect=Y\n"
       "UseDataDictionary=N\nPersistMessages=N\nSocketNodelay=Y\n";
  for (int i = 1; i <= sessions; ++i)
    s << "[SESSION]\nSenderCompID=LOAD" << i << "\n";
  return s.str();
}

} // namespace

struct fix_client::impl {
  client_application app;
  FIX::MemoryStoreFactory store;
  std::unique_ptr<FIX::ThreadedSocketInitiator> initiator;
  FIX::Session* sessions[max_sessions + 1] = {};
  int count = 0;
  bool stopped = false;
};

int64_t fix_client::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

fix_client::fix_client() : impl_(new impl) {}

fix_client::~fix_client() { stop(); }

bool fix_client::start(const std::string& host, int port, int sessions,
                       message_fn on_message, std::string& error) {
  try {
    impl_->app.on_message = std::move(on_message);
    std::istringstream in(client_settings(host, port, sessions));
    FIX::SessionSettings settings(in);
    impl_->initiator.reset(new FIX::ThreadedSocketInitiator(impl_->app, impl_->store, settings));
    for (const FIX::SessionID& id : impl_->initiator->getSessions())
      impl_->sessions[session_of(id)] = impl_->initiator->getSession(id);
    impl_->count = sessions;
    impl_->initiator->start();
    return true;
  } catch (const std::exception& e) {
    error = std::string("QuickFIX initiator: ") + e.what();
    return false;
  }
}

bool fix_client::wait_logged_on(double timeout_s) {
  int64_t end = now_ns() + static_cast<int64_t>(timeout_s * 1e9);
  while (logged_on() < impl_->count) {
    if (now_ns() > end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int fix_client::send(int session, const std::string& msg_type,
                     const field_list& fields) {
  if (session < 1 || session > impl_->count || !impl_->app.session_up[session])
    return 0;
  FIX::Message m;
  m.getHeader().setField(FIX::FIELD::MsgType, msg_type);
  for (const auto& f : fields)
    m.setField(f.first, f.second);
  if (msg_type == "D" || msg_type == "F" || msg_type == "G")
    m.setField(FIX::TransactTime(3));
  if (!impl_->sessions[session]->send(m))
    return 0;
  return static_cast<int>(
    std::strtol(m.getHeader().getField(FIX::FIELD::MsgSeqNum).c_str(), nullptr, 10));
}

int fix_client::logged_on() const { return impl_->app.up.load(); }

uint64_t fix_client::logouts() const { return impl_->app.logouts.load(); }

uint64_t fix_client::rejects_sent() const { return impl_->app.rejects_sent.load(); }

void fix_client::stop() {
  if (impl_->initiator && !impl_->stopped) {
    impl_->initiator->stop();
    impl_->stopped = true;
  }
}

} // namespace load
} // namespace exchange
