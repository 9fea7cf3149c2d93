// SPDX-License-Identifier: Apache-2.0
#pragma once

// Turns an incoming FIX 4.4 application message into an order_request.
// C++14 and QuickFIX: included only by the gateway's translation units.

#include <quickfix/Message.h>

#include "../orders.hpp"

namespace exchange {
namespace fix {

/// A required field the message lacks, found before anything is decoded so
/// the gateway can answer with one session-level Reject naming it.
struct missing_field {
  int tag = 0;       ///< 0 when nothing is missing
  const char* name = "";
};

/// The first required field of a NewOrderSingle (D), OrderCancelRequest (F)
/// or OrderCancelReplaceRequest (G) that `msg` lacks; tag 0 if none.
/// Price (44) is required only when OrdType is limit, so that a market
/// order reaches the matcher and gets its business reject.
missing_field find_missing(const FIX::Message& msg, char msg_type);

/// Decodes a D, F or G message for session `session`. Throws
/// FIX::IncorrectDataFormat (a number that is not one) and
/// FIX::IncorrectTagValue (Side not 1 or 2): QuickFIX answers both with a
/// session-level Reject. Business rules (symbol, qty, tick, OrdType, TIF)
/// are not checked here: the matcher owns them.
order_request decode_request(const FIX::Message& msg, char msg_type,
                             int session);

} // namespace fix
} // namespace exchange
