// SPDX-License-Identifier: Apache-2.0
#pragma once

// Cuts a connection's byte stream into FIX messages inside a buffer of a
// fixed size. C++14 and QuickFIX-free: the gateway builds it as C++14, the
// unit tests as C++17.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace exchange {
namespace fix {

/// The FIX framing of one connection, in a buffer that never grows past
/// its capacity. A message is `8=<BeginString>|9=<BodyLength>|<body>`
/// followed by `10=<3 digits>|` right where BodyLength says (`|` = SOH);
/// the checksum's value and the body are QuickFIX's to check. Bytes that
/// cannot start a message (no `8=`) are discarded as they arrive, so a
/// stream of garbage costs one scan of each byte and no memory. A
/// BodyLength that would make the message larger than the capacity is
/// refused before any of its body is read. Not thread-safe: one reader.
class fix_framer {
public:
  /// What `next` found.
  enum class result {
    message,   ///< a whole message; its bytes stay valid until the next call
    need_more, ///< no whole message yet: read more (`space`)
    too_long,  ///< its BodyLength makes it larger than the capacity
    garbled,   ///< `8=` without a valid header, or no `10=` where
               ///< BodyLength ends; its `8=` was skipped, so `next` resyncs
  };

  /// The longest BeginString value looked for (`FIXT.1.1` is 8).
  static constexpr size_t max_begin_string = 16;

  /// The most digits a BodyLength may have.
  static constexpr size_t max_length_digits = 9;

  /// `capacity`: the most bytes held, and so the largest message, header
  /// and trailer included. Throws std::invalid_argument if below 64.
  explicit fix_framer(size_t capacity);

  /// Raises the capacity (a logged-on connection may send more); never
  /// lowers it below what is buffered.
  void set_capacity(size_t capacity);

  [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

  /// Where the next read may write, after moving what is kept to the
  /// front; `space_size` bytes fit there.
  [[nodiscard]] char* space();
  [[nodiscard]] size_t space_size() const noexcept {
    return capacity_ - (end_ - begin_);
  }

  /// Counts `n` bytes written at `space()` as received.
  void commit(size_t n) noexcept { end_ += n; }

  /// Copies as much of `data` as fits; returns how much did.
  size_t feed(const char* data, size_t n);

  /// The next message, if a whole one is buffered: `msg` and `len` point
  /// into the buffer.
  [[nodiscard]] result next(const char*& msg, size_t& len);

  /// Bytes held now.
  [[nodiscard]] size_t buffered() const noexcept { return end_ - begin_; }

  /// Bytes thrown away so far: garbage, and the `8=` of garbled headers.
  [[nodiscard]] uint64_t discarded() const noexcept { return discarded_; }

  /// The BodyLength of the last `too_long` message.
  [[nodiscard]] uint64_t refused_length() const noexcept { return refused_; }

private:
  void discard(size_t n) noexcept {
    begin_ += n;
    discarded_ += n;
  }
  result skip_garbled() noexcept {
    discard(2);
    return result::garbled;
  }

  std::vector<char> buf_; // allocated up to capacity_ as needed
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t discarded_ = 0;
  uint64_t refused_ = 0;
};

} // namespace fix
} // namespace exchange
