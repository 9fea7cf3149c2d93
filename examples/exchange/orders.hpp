// SPDX-License-Identifier: Apache-2.0
#pragma once

// The exchange's order and report types, free of QuickFIX and of keylane so
// that the FIX translation units (built as C++14, see fix/CMakeLists.txt)
// and the matcher (C++17) share them. Keep this header C++14.

#include <cstdint>
#include <string>

namespace exchange {

enum class side : char { buy = '1', sell = '2' };

enum class request_kind : char {
  new_order = 'D', ///< NewOrderSingle, limit, DAY
  cancel = 'F',    ///< OrderCancelRequest
  replace = 'G',   ///< OrderCancelReplaceRequest
  // Never from a client (`validate` refuses them): what a book sends an
  // account key in the keylane matcher.
  risk_check = 'r', ///< may `account` trade `qty` at `price` on side `sd`?
  fill = 'f',       ///< `account` traded `qty` at `price` on side `sd`
};

/// One client request, as the FIX gateway decoded it. Fields the FIX
/// message lacked are left empty / zero; the matcher validates them.
struct order_request {
  request_kind kind = request_kind::new_order;
  int session = -1;           ///< the gateway's index of the FIX session
  std::string cl_ord_id;      ///< tag 11
  std::string orig_cl_ord_id; ///< tag 41 (cancel, replace)
  std::string account;        ///< tag 1
  std::string symbol;         ///< tag 55
  side sd = side::buy;        ///< tag 54
  double price = 0;           ///< tag 44 (new, replace)
  int64_t qty = 0;            ///< tag 38 (new, replace)
  char ord_type = '2';        ///< tag 40; only '2' (limit) is accepted
  char time_in_force = '0';   ///< tag 59; only '0' (DAY) is accepted
};

/// What a report tells the client. `cancel_reject` is an
/// OrderCancelReject (35=9); every other kind is an ExecutionReport (35=8)
/// whose ExecType (150) is the enum's character.
enum class report_kind : char {
  new_ack = '0',
  partial_fill = 'F', ///< ExecType=F (trade), OrdStatus=1
  fill = 'G',         ///< ExecType=F (trade), OrdStatus=2 (distinct value here only)
  canceled = '4',
  replaced = '5',
  rejected = '8',
  cancel_reject = '9',
};

/// One report to one session.
struct exec_report {
  int session = -1;
  report_kind kind = report_kind::new_ack;
  std::string order_id;       ///< tag 37; "NONE" when the order is unknown
  std::string exec_id;        ///< tag 17; unique per report
  std::string cl_ord_id;      ///< tag 11: the request this answers, or the
                              ///< order's current ClOrdID for fills
  std::string orig_cl_ord_id; ///< tag 41 (canceled, replaced, cancel_reject)
  std::string account;        ///< tag 1
  std::string symbol;         ///< tag 55
  side sd = side::buy;        ///< tag 54
  double price = 0;           ///< tag 44: the order's limit
  int64_t order_qty = 0;      ///< tag 38
  int64_t last_qty = 0;       ///< tag 32 (fills)
  double last_px = 0;         ///< tag 31 (fills)
  int64_t leaves_qty = 0;     ///< tag 151
  int64_t cum_qty = 0;        ///< tag 14
  double avg_px = 0;          ///< tag 6
  int reject_reason = 0;      ///< tag 103 (rejected) or 102 (cancel_reject)
  char cxl_rej_response_to = '1'; ///< tag 434: '1' cancel, '2' replace
  std::string text;           ///< tag 58: why, for rejects
  uint64_t symbol_seq = 0;    ///< tag 20001: position among all reports of
                              ///< the symbol, from 1, strictly increasing
};

/// OrdStatus (39) of a report.
inline char ord_status(const exec_report& r) {
  switch (r.kind) {
    case report_kind::new_ack: return '0';
    case report_kind::partial_fill: return '1';
    case report_kind::fill: return '2';
    case report_kind::canceled: return '4';
    case report_kind::replaced: return r.cum_qty > 0 ? '1' : '0';
    case report_kind::rejected: return '8';
    case report_kind::cancel_reject: return '8';
  }
  return '8';
}

} // namespace exchange
