// SPDX-License-Identifier: Apache-2.0
#pragma once

// An account key: its balance in keylane's keyed state, and transfers that
// debit it and tell the receiving account to credit itself.

#include <string>

#include <keylane/stateful_handler.hpp>

namespace transfers {

struct account {
  long balance = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, account& x) {
  return f(caf::meta::type_name("account"), x.balance);
}

/// An event of an account: a transfer out of it to `to`, or (`credit`) the
/// money of a transfer coming in. `input` numbers the account's events from
/// outside, 1, 2, ... (0: a credit another account told it), so that an
/// input sent again after a crash is applied once (`state_origin` below).
struct transfer {
  std::string to;
  long amount = 0;
  bool credit = false;
  long input = 0;
};

// A codec: with one, keylane keeps each told credit in the sender's state
// until the receiver's state holds it (`messaging.exactly_once`).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, transfer& x) {
  return f(caf::meta::type_name("transfer"), x.to, x.amount, x.credit,
           x.input);
}

// doc:begin docs/messaging.md
// A transfer debits its account and tells the receiver to credit itself.
// The credit leaves only when this event ends well: a failed attempt's
// tells are dropped with its state changes, and its retry sends its own.
struct account_handler : keylane::stateful_handler<transfer, long, account> {
  void on_event(transfer& m, keylane::completion<long> done) override {
    if (m.credit) {
      state().balance += m.amount;
      return done.ok(state().balance);
    }
    if (state().balance < m.amount)
      return done.skip(); // refused: insufficient funds
    state().balance -= m.amount;
    if (auto e = tell(m.to, transfer{"", m.amount, true}); e != keylane::errc::none)
      return done.fail(keylane::to_string(e)); // undone; retried later
    done.ok(state().balance);
  }
};
// doc:end

} // namespace transfers

// Where an input sits in its account's stream of inputs.
template <>
struct keylane::state_origin<transfers::transfer> {
  static constexpr bool available = true;
  static bool of(const transfers::transfer& m, std::string& stream,
                 int64_t& position) {
    if (m.input == 0)
      return false;
    stream = "input";
    position = m.input;
    return true;
  }
};
