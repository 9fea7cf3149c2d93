// SPDX-License-Identifier: Apache-2.0
#pragma once

// Turns an exec_report into the FIX 4.4 message the client gets. C++14 and
// QuickFIX: included only by the gateway's translation units.

#include <quickfix/Message.h>

#include "../orders.hpp"

namespace exchange {
namespace fix {

/// Custom tag: the report's position among all reports of its symbol.
constexpr int symbol_seq_tag = 20001;

/// An ExecutionReport (35=8), or an OrderCancelReject (35=9) for
/// `report_kind::cancel_reject`. The header is left for the session to
/// fill (BeginString, CompIDs, MsgSeqNum, SendingTime). Empty strings leave
/// their tag out; an empty ExecID becomes "G<fallback_exec_id>".
FIX::Message encode_report(const exec_report& r, uint64_t fallback_exec_id);

} // namespace fix
} // namespace exchange
