// SPDX-License-Identifier: Apache-2.0
#include "fix_framer.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace exchange {
namespace fix {

namespace {

constexpr char soh = '\001';
constexpr size_t trailer = 7; // 10=NNN|

const char* find(const char* from, const char* to, char c) {
  return static_cast<const char*>(std::memchr(from, c, to - from));
}

bool digit(char c) { return c >= '0' && c <= '9'; }

} // namespace

fix_framer::fix_framer(size_t capacity) : capacity_(capacity) {
  if (capacity < 64)
    throw std::invalid_argument("fix_framer: capacity < 64");
}

void fix_framer::set_capacity(size_t capacity) {
  capacity_ = std::max(capacity, end_ - begin_);
}

char* fix_framer::space() {
  // Only a partial message is ever kept, so this moves little.
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buf_.size() < capacity_)
    buf_.resize(capacity_);
  return buf_.data() + end_;
}

size_t fix_framer::feed(const char* data, size_t n) {
  n = std::min(n, space_size());
  std::memcpy(space(), data, n);
  commit(n);
  return n;
}

fix_framer::result fix_framer::next(const char*& msg, size_t& len) {
  const char* const base = buf_.data();
  const char* const end = base + end_;
  // Find "8="; whatever precedes it can never be part of a message.
  const char* p = base + begin_;
  for (;;) {
    p = p < end ? find(p, end, '8') : nullptr;
    if (p == nullptr) {
      discard(end_ - begin_);
      return result::need_more;
    }
    if (p + 1 == end) { // a lone '8' may be the start of the next read
      discard(p - (base + begin_));
      return result::need_more;
    }
    if (p[1] == '=')
      break;
    ++p;
  }
  discard(p - (base + begin_));

  // 8=<BeginString>|
  const char* limit = std::min(end, p + 2 + max_begin_string + 1);
  const char* soh1 = find(p + 2, limit, soh);
  if (soh1 == nullptr)
    return limit == end && end - p <= static_cast<ptrdiff_t>(2 + max_begin_string)
             ? result::need_more
             : skip_garbled();
  if (soh1 == p + 2)
    return skip_garbled();

  // 9=<digits>|
  const char* q = soh1 + 1;
  if (end - q < 2)
    return result::need_more;
  if (q[0] != '9' || q[1] != '=')
    return skip_garbled();
  uint64_t body = 0;
  const char* d = q + 2;
  for (; d < end && digit(*d); ++d) {
    if (static_cast<size_t>(d - (q + 2)) == max_length_digits) {
      refused_ = body; // the first nine digits; more is longer still
      return result::too_long;
    }
    body = body * 10 + static_cast<uint64_t>(*d - '0');
  }
  if (d == end)
    return result::need_more;
  if (*d != soh || d == q + 2)
    return skip_garbled();
  const size_t header = static_cast<size_t>(d + 1 - p);
  if (header + body + trailer > capacity_) {
    refused_ = body;
    return result::too_long;
  }
  const size_t total = header + static_cast<size_t>(body) + trailer;
  if (static_cast<size_t>(end - p) < total)
    return result::need_more;

  // 10=NNN| exactly where BodyLength ends.
  const char* t = p + header + body;
  if (t[0] != '1' || t[1] != '0' || t[2] != '=' || !digit(t[3])
      || !digit(t[4]) || !digit(t[5]) || t[6] != soh)
    return skip_garbled();
  msg = p;
  len = total;
  begin_ += total;
  return result::message;
}

} // namespace fix
} // namespace exchange
