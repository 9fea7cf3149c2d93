// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include "sqlite_handle.hpp"
#include "keylane/park_store.hpp"

namespace keylane::detail {

/// The park store on `db`, a connection to `path` that
/// `open_sqlite_park_store` opened and checked (sqlite_park_open.cpp).
[[nodiscard]] std::unique_ptr<park_store>
make_sqlite_park_store(std::string path, sqlite_db db);

} // namespace keylane::detail
