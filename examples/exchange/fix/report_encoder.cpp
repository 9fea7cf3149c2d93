// SPDX-License-Identifier: Apache-2.0
#include "report_encoder.hpp"

#include <quickfix/FieldConvertors.h>
#include <quickfix/FieldNumbers.h>

namespace exchange {
namespace fix {

namespace {

// FIX forbids a tag without a value (the receiver's QuickFIX rejects the
// whole message, 373=4), so an empty string leaves the tag out.
void set(FIX::Message& m, int tag, const std::string& v) {
  if (!v.empty())
    m.setField(tag, v);
}
void set(FIX::Message& m, int tag, char v) { m.setField(tag, std::string(1, v)); }
void set_int(FIX::Message& m, int tag, int64_t v) {
  m.setField(tag, std::to_string(v));
}
// QuickFIX prints 15 significant digits, so 100.01 stays "100.01".
void set_price(FIX::Message& m, int tag, double v) {
  m.setField(tag, FIX::DoubleConvertor::convert(v));
}

FIX::Message cancel_reject(const exec_report& r) {
  FIX::Message m;
  m.getHeader().setField(FIX::FIELD::MsgType, "9");
  set(m, FIX::FIELD::OrderID, r.order_id.empty() ? std::string("NONE") : r.order_id);
  set(m, FIX::FIELD::ClOrdID, r.cl_ord_id);
  set(m, FIX::FIELD::OrigClOrdID, r.orig_cl_ord_id);
  set(m, FIX::FIELD::OrdStatus, ord_status(r));
  set(m, FIX::FIELD::CxlRejResponseTo, r.cxl_rej_response_to);
  set_int(m, FIX::FIELD::CxlRejReason, r.reject_reason);
  if (!r.account.empty())
    set(m, FIX::FIELD::Account, r.account);
  if (!r.text.empty())
    set(m, FIX::FIELD::Text, r.text);
  if (r.symbol_seq > 0)
    set_int(m, symbol_seq_tag, static_cast<int64_t>(r.symbol_seq));
  return m;
}

} // namespace

FIX::Message encode_report(const exec_report& r, uint64_t fallback_exec_id) {
  if (r.kind == report_kind::cancel_reject)
    return cancel_reject(r);
  FIX::Message m;
  m.getHeader().setField(FIX::FIELD::MsgType, "8");
  const bool trade = r.kind == report_kind::partial_fill || r.kind == report_kind::fill;
  set(m, FIX::FIELD::OrderID, r.order_id.empty() ? std::string("NONE") : r.order_id);
  // ExecID is required; the "G" prefix keeps the gateway's own ids apart
  // from the matcher's.
  set(m, FIX::FIELD::ExecID,
      r.exec_id.empty() ? "G" + std::to_string(fallback_exec_id) : r.exec_id);
  set(m, FIX::FIELD::ExecType, trade ? 'F' : static_cast<char>(r.kind));
  set(m, FIX::FIELD::OrdStatus, ord_status(r));
  set(m, FIX::FIELD::Symbol, r.symbol);
  set(m, FIX::FIELD::Side, static_cast<char>(r.sd));
  set_int(m, FIX::FIELD::LeavesQty, r.leaves_qty);
  set_int(m, FIX::FIELD::CumQty, r.cum_qty);
  set_price(m, FIX::FIELD::AvgPx, r.avg_px);
  set(m, FIX::FIELD::ClOrdID, r.cl_ord_id);
  if (!r.orig_cl_ord_id.empty())
    set(m, FIX::FIELD::OrigClOrdID, r.orig_cl_ord_id);
  if (!r.account.empty())
    set(m, FIX::FIELD::Account, r.account);
  set_int(m, FIX::FIELD::OrderQty, r.order_qty);
  set_price(m, FIX::FIELD::Price, r.price);
  if (trade) {
    set_int(m, FIX::FIELD::LastQty, r.last_qty);
    set_price(m, FIX::FIELD::LastPx, r.last_px);
  }
  if (r.kind == report_kind::rejected) {
    set_int(m, FIX::FIELD::OrdRejReason, r.reject_reason);
    set(m, FIX::FIELD::Text, r.text.empty() ? std::string("rejected") : r.text);
  } else if (!r.text.empty()) {
    set(m, FIX::FIELD::Text, r.text);
  }
  if (r.symbol_seq > 0)
    set_int(m, symbol_seq_tag, static_cast<int64_t>(r.symbol_seq));
  return m;
}

} // namespace fix
} // namespace exchange
