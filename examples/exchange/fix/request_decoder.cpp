// SPDX-License-Identifier: Apache-2.0
#include "request_decoder.hpp"

#include <cmath>
#include <cstdlib>

#include <quickfix/Exceptions.h>
#include <quickfix/FieldNumbers.h>

namespace exchange {
namespace fix {

namespace {

struct required_tag {
  int tag;
  const char* name;
};

// The order of each list is the order a reader checks a ticket in; the
// first missing one is named in the Reject.
const required_tag new_order_tags[] = {
  {FIX::FIELD::ClOrdID, "ClOrdID"},   {FIX::FIELD::Symbol, "Symbol"},
  {FIX::FIELD::Side, "Side"},         {FIX::FIELD::TransactTime, "TransactTime"},
  {FIX::FIELD::OrderQty, "OrderQty"}, {FIX::FIELD::OrdType, "OrdType"},
};
const required_tag cancel_tags[] = {
  {FIX::FIELD::OrigClOrdID, "OrigClOrdID"}, {FIX::FIELD::ClOrdID, "ClOrdID"},
  {FIX::FIELD::Symbol, "Symbol"},           {FIX::FIELD::Side, "Side"},
  {FIX::FIELD::TransactTime, "TransactTime"},
};
const required_tag replace_tags[] = {
  {FIX::FIELD::OrigClOrdID, "OrigClOrdID"}, {FIX::FIELD::ClOrdID, "ClOrdID"},
  {FIX::FIELD::Symbol, "Symbol"},           {FIX::FIELD::Side, "Side"},
  {FIX::FIELD::TransactTime, "TransactTime"},
  {FIX::FIELD::OrderQty, "OrderQty"},       {FIX::FIELD::OrdType, "OrdType"},
};

template <size_t N>
missing_field first_missing(const FIX::Message& msg,
                            const required_tag (&tags)[N]) {
  for (const auto& t : tags)
    if (!msg.isSetField(t.tag))
      return {t.tag, t.name};
  return {};
}

std::string get_or_empty(const FIX::Message& msg, int tag) {
  return msg.isSetField(tag) ? msg.getField(tag) : std::string{};
}

char get_char(const FIX::Message& msg, int tag, char fallback) {
  if (!msg.isSetField(tag))
    return fallback;
  const std::string& v = msg.getField(tag);
  if (v.size() != 1)
    throw FIX::IncorrectDataFormat(tag, v);
  return v[0];
}

double get_double(const FIX::Message& msg, int tag) {
  if (!msg.isSetField(tag))
    return 0;
  const std::string& v = msg.getField(tag);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d))
    throw FIX::IncorrectDataFormat(tag, v);
  return d;
}

// Quantities are whole shares here; "1.5" is a format error, "-5" and "0"
// are well-formed numbers the matcher rejects.
int64_t get_qty(const FIX::Message& msg, int tag) {
  double d = get_double(msg, tag);
  if (d != std::floor(d) || std::fabs(d) > 1e15)
    throw FIX::IncorrectDataFormat(tag, msg.getField(tag));
  return static_cast<int64_t>(d);
}

} // namespace

missing_field find_missing(const FIX::Message& msg, char msg_type) {
  missing_field m;
  switch (msg_type) {
    case 'D': m = first_missing(msg, new_order_tags); break;
    case 'F': m = first_missing(msg, cancel_tags); break;
    case 'G': m = first_missing(msg, replace_tags); break;
    default: return m;
  }
  if (m.tag == 0 && msg_type != 'F' && !msg.isSetField(FIX::FIELD::Price)
      && get_char(msg, FIX::FIELD::OrdType, '2') == '2')
    m = {FIX::FIELD::Price, "Price"};
  return m;
}

order_request decode_request(const FIX::Message& msg, char msg_type,
                             int session) {
  order_request r;
  r.kind = static_cast<request_kind>(msg_type);
  r.session = session;
  r.cl_ord_id = get_or_empty(msg, FIX::FIELD::ClOrdID);
  r.orig_cl_ord_id = get_or_empty(msg, FIX::FIELD::OrigClOrdID);
  r.account = get_or_empty(msg, FIX::FIELD::Account);
  r.symbol = get_or_empty(msg, FIX::FIELD::Symbol);
  char sd = get_char(msg, FIX::FIELD::Side, '1');
  if (sd != '1' && sd != '2')
    throw FIX::IncorrectTagValue(FIX::FIELD::Side, std::string(1, sd));
  r.sd = static_cast<side>(sd);
  r.qty = get_qty(msg, FIX::FIELD::OrderQty);
  r.price = get_double(msg, FIX::FIELD::Price);
  r.ord_type = get_char(msg, FIX::FIELD::OrdType, '2');
  // FIX: an absent TimeInForce means DAY.
  r.time_in_force = get_char(msg, FIX::FIELD::TimeInForce, '0');
  return r;
}

} // namespace fix
} // namespace exchange
