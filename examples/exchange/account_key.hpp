// SPDX-License-Identifier: Apache-2.0
#pragma once

// An account as a key of the keylane matcher: its position and traded
// notional are the key's state, moved by the fills its books tell it and
// read by the pre-trade checks they ask it.

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

#include <keylane/key.hpp>

namespace exchange {

/// What an account key keeps.
struct account_position {
  int64_t position = 0; ///< shares bought minus shares sold
  double traded = 0;    ///< notional traded today
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account_position& x) {
  return f(caf::meta::type_name("account_position"), x.position, x.traded);
}

/// The key of `account`. Symbols are listed names without '/', so no
/// symbol is an account key.
inline std::string account_key(const std::string& account) {
  return "account/" + account;
}

inline bool is_account_key(const keylane::key& k) {
  return !k.is_integer() && k.str().rfind("account/", 0) == 0;
}

} // namespace exchange
