// SPDX-License-Identifier: Apache-2.0
#include "bad_inputs.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <vector>

#include <quickfix/FieldNumbers.h>

#include "fix_client.hpp"

namespace exchange {
namespace load {

namespace {

using namespace FIX::FIELD;

// Every message received, kept so an answer that beats `send`'s return
// (and its MsgSeqNum) is still found.
class inbox {
public:
  void push(const incoming& in) {
    std::lock_guard<std::mutex> lock(m_);
    all_.push_back(in);
    cv_.notify_all();
  }
  bool wait_for(const std::function<bool(const incoming&)>& match, double timeout_s,
                incoming& out) {
    std::unique_lock<std::mutex> lock(m_);
    auto until = std::chrono::steady_clock::now()
                 + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    size_t seen = 0;
    for (;;) {
      for (; seen < all_.size(); ++seen)
        if (match(all_[seen])) {
          out = all_[seen];
          return true;
        }
      if (cv_.wait_until(lock, until) == std::cv_status::timeout && seen == all_.size())
        return false;
    }
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<incoming> all_;
};

struct bad_case {
  const char* name;
  std::string msg_type;
  field_list fields;
  // Checks the answer; returns "" if right, else what was wrong.
  std::function<std::string(const incoming&)> expect;
};

std::string describe(const incoming& in) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "35=%c 150=%c 39=%c reason=%d 58=\"%s\"", in.msg_type,
                in.exec_type ? in.exec_type : '-', in.ord_status ? in.ord_status : '-',
                in.reason, in.text.c_str());
  return buf;
}

std::function<std::string(const incoming&)> expect_type(char type, int reason) {
  return [type, reason](const incoming& in) -> std::string {
    if (in.msg_type != type || (reason >= 0 && in.reason != reason))
      return std::string("expected 35=") + type
             + (reason >= 0 ? " reason " + std::to_string(reason) : "") + ", got "
             + describe(in);
    return "";
  };
}

std::string expect_rejected_report(const incoming& in) {
  if (in.msg_type != '8' || in.exec_type != '8' || in.ord_status != '8' || in.text.empty())
    return "expected 35=8 150=8 39=8 with 58, got " + describe(in);
  return "";
}

field_list order(const std::string& cl, const std::string& sym, const std::string& qty,
                 const std::string& type, const std::string& px) {
  field_list f = {{ClOrdID, cl}, {Account, "A1-0"}, {Symbol, sym}, {Side, "1"},
                  {OrderQty, qty}, {OrdType, type}};
  if (!px.empty())
    f.emplace_back(Price, px);
  f.emplace_back(TimeInForce, "0");
  return f;
}

} // namespace

bool check_bad_inputs(const load_options& o) {
  inbox box;
  fix_client client;
  std::string error;
  if (!client.start(o.host, o.port, 1, [&box](const incoming& in) { box.push(in); },
                    error)
      || !client.wait_logged_on(10)) {
    std::printf("FAIL  logon to %s:%d: %s\n", o.host.c_str(), o.port,
                error.empty() ? "LOAD1 did not log on within 10 s" : error.c_str());
    return false;
  }
  // ClOrdIDs unique across runs against one long-lived server.
  const std::string run = "bad" + std::to_string(fix_client::now_ns() / 1000000 % 100000000);
  auto id = [&run](const char* what) { return run + "-" + what; };

  std::vector<bad_case> cases = {
    {"NewOrderSingle without Symbol -> Reject", "D",
     {{ClOrdID, id("nosym")}, {Side, "1"}, {OrderQty, "10"}, {OrdType, "2"},
      {Price, "10.00"}, {TimeInForce, "0"}},
     expect_type('3', 1)},
    {"OrderQty not a number -> Reject", "D", order(id("qtyabc"), "S0001", "abc", "2", "10.00"),
     expect_type('3', 6)},
    {"Side 7 -> Reject", "D",
     {{ClOrdID, id("side7")}, {Symbol, "S0001"}, {Side, "7"}, {OrderQty, "10"},
      {OrdType, "2"}, {Price, "10.00"}, {TimeInForce, "0"}},
     expect_type('3', 5)},
    {"QuoteRequest (unsupported) -> BusinessMessageReject", "R",
     {{131, id("quote")}, {146, "1"}, {Symbol, "S0001"}},
     expect_type('j', 3)},
    {"unknown symbol -> rejected", "D", order(id("unknown"), "ZZZZ", "10", "2", "10.00"),
     expect_rejected_report},
    {"OrderQty 0 -> rejected", "D", order(id("qty0"), "S0001", "0", "2", "10.00"),
     expect_rejected_report},
    {"OrderQty -5 -> rejected", "D", order(id("qtyneg"), "S0001", "-5", "2", "10.00"),
     expect_rejected_report},
    {"price 100.005 off the tick -> rejected", "D",
     order(id("tick"), "S0001", "10", "2", "100.005"), expect_rejected_report},
    {"market order -> rejected", "D", order(id("market"), "S0001", "10", "1", ""),
     expect_rejected_report},
    {"cancel of an unknown ClOrdID -> OrderCancelReject 102=1", "F",
     {{OrigClOrdID, id("never-sent")}, {ClOrdID, id("cxl")}, {Symbol, "S0001"},
      {Side, "1"}, {OrderQty, "10"}},
     expect_type('9', 1)},
  };

  bool all = true;
  int n = 0;
  for (const bad_case& c : cases) {
    ++n;
    std::string cl;
    for (const auto& f : c.fields)
      if (f.first == ClOrdID || f.first == 131)
        cl = f.second;
    int seq = client.send(1, c.msg_type, c.fields);
    incoming answer;
    std::string why;
    if (seq == 0) {
      why = "not sent: session down";
    } else if (!box.wait_for(
                 [&](const incoming& in) {
                   return ((in.msg_type == '8' || in.msg_type == '9') && in.cl_ord_id == cl)
                          || ((in.msg_type == '3' || in.msg_type == 'j') && in.ref_seq == seq);
                 },
                 5, answer)) {
      why = "no answer within 5 s";
    } else {
      why = c.expect(answer);
    }
    // The session must still take orders: a far-off limit that rests.
    std::string ok_cl = id(("ok" + std::to_string(n)).c_str());
    std::string after;
    incoming ack;
    if (client.send(1, "D", order(ok_cl, "S0002", "10", "2", "1.00")) == 0)
      after = "session down after the case";
    else if (!box.wait_for([&](const incoming& in) { return in.cl_ord_id == ok_cl; }, 5, ack))
      after = "valid order after it got no answer within 5 s";
    else if (ack.msg_type != '8' || ack.exec_type != '0')
      after = "valid order after it got " + describe(ack);
    bool pass = why.empty() && after.empty();
    all = all && pass;
    std::printf("%s  %s%s%s%s%s\n", pass ? "PASS" : "FAIL", c.name,
                why.empty() ? "" : ": ", why.c_str(), after.empty() ? "" : "; ",
                after.c_str());
    if (pass && seq != 0)
      std::printf("      answer: %s\n", describe(answer).c_str());
  }
  if (client.logouts() > 0) {
    std::printf("FAIL  the session logged out %llu times during the checks\n",
                static_cast<unsigned long long>(client.logouts()));
    all = false;
  }
  client.stop();
  std::printf("%s\n", all ? "all bad-input cases PASS" : "some bad-input cases FAILED");
  return all;
}

} // namespace load
} // namespace exchange
