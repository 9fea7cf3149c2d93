// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <type_traits>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace keylane {

/// Error codes of keylane; every failing call names one of these.
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// The window (events accepted but not yet delivered) is full.
  window_full,
  /// This key already holds `key_backlog` events that have not completed.
  key_backlog_full,
  /// The runtime was stopped or is stopping; nothing more is accepted.
  stopped,
  /// A config file or value is invalid; the message names file, line and key.
  invalid_config,
  /// A config file could not be read.
  unreadable_config,
  /// The handler named in the config is not registered, or has other types.
  unknown_handler,
  /// A handler reported a failure, threw, or dropped its completion.
  handler_failed,
  /// A bounded wait ran out of time: the Kafka producer's flush, or a
  /// program's own wait for `runtime::drain` (which itself returns false).
  /// No submit returns it: a blocking submit waits until it has credit or
  /// the runtime stops, and a submit from a keylane thread never waits.
  timeout,
  /// The actor system could not be started.
  startup_failed,
  /// A payload could not be encoded for, or decoded from, the park store.
  codec_failed,
  /// The park store could not be opened, read or written.
  park_store_failed,
  /// The sink's spill file could not be created, written or read.
  spill_failed,
  /// A config file is larger than `max_config_bytes` (1 MiB).
  config_too_large,
  /// The keyed-state store could not be opened, read or written, or holds
  /// bytes that are not a keylane state record.
  state_store_failed,
  /// A handler's `tell`, `ask` or due timer would put more than
  /// `messaging.max_in_flight` messages between keys in flight: fail the
  /// event (it is retried after a backoff) or try again from `run_later`.
  messages_full,
  /// An `ask` got no answer within its timeout: the asked key is slow or
  /// parked, or it waits, directly or through other keys, for the asker
  /// (a cycle of asks).
  ask_timeout,
  /// The asked key's event ended without a result: it failed, was
  /// skipped or parked; the message says which, and why.
  ask_failed,
  /// A `tell_after` would hold more than `messaging.max_timers` timers.
  timers_full,
};

/// Returns the name of `x`, for example "window_full".
[[nodiscard]] const char* to_string(errc x) noexcept;

/// The `std::error_category` of `errc`, named "keylane": its `message(int)`
/// says in a few words what the code means. One object for the process.
[[nodiscard]] const std::error_category& error_category() noexcept;

/// Makes `x` a `std::error_code` of `error_category()`; `errc::none` (0) is
/// the code that tests false. Found by ADL, so `std::error_code ec =
/// errc::window_full;` and `ec == errc::window_full` compile.
[[nodiscard]] std::error_code make_error_code(errc x) noexcept;

/// The `std::error_code` of an error keylane produced (`make_error`): its
/// `errc` in `error_category()`. An empty error gives the empty code; an
/// error of another category (CAF's own) gives `std::errc::io_error` of the
/// generic category, since no `errc` names it; `render(err)` keeps its text.
[[nodiscard]] std::error_code to_error_code(const caf::error& err) noexcept;

/// Wraps `x` and a human-readable message into a CAF error.
[[nodiscard]] caf::error make_error(errc x, std::string message = {});

/// Renders an error produced by keylane as "name: message".
[[nodiscard]] std::string render(const caf::error& err);

} // namespace keylane

/// `errc` is an error code enum: `std::error_code` accepts it directly.
template <>
struct std::is_error_code_enum<keylane::errc> : std::true_type {};
