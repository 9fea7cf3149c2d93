#pragma once

// The keylane way's account table: where a lane loads its account's state
// when it starts and flushes it when it retires.

#include <mutex>
#include <string>
#include <unordered_map>

#include "account.hpp"

namespace ledger {

/// An in-memory table of account states, standing in for a database.
///
/// Thread-safety: `load` and `save` may be called from any threads at once
/// (one mutex). keylane runs a key's `on_retire` before its next
/// `on_activate`, so a key's save is always seen by its next load.
class account_store {
public:
  /// The stored state of `account`; a fresh (unopened) one if none.
  [[nodiscard]] account_state load(const std::string& account) const {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = rows_.find(account);
    return i == rows_.end() ? account_state{} : i->second;
  }

  /// Stores `s` as the state of `account`.
  void save(const std::string& account, const account_state& s) {
    std::lock_guard<std::mutex> guard{mtx_};
    rows_[account] = s;
  }

private:
  mutable std::mutex mtx_;
  std::unordered_map<std::string, account_state> rows_;
};

} // namespace ledger
