// SPDX-License-Identifier: Apache-2.0
// The state record's bytes. Stores keep them for years and across keylane
// versions, so the layout is fixed and versioned, independent of the host
// (little-endian, no padding), and checked as a whole:
//
//   offset  size  field
//        0     4  magic "KLST"
//        4     1  version (1, or 2 with messages)
//        5     8  size of the whole record, uint64 little-endian
//       13     *  events              varint
//                 taken_at_ms         zigzag varint
//                 origin count        varint
//                   per origin:       name length varint, name bytes,
//                                     position zigzag varint
//                 state length        varint, state bytes
//                 (version 2 only:)
//                 sent                varint
//                 outbox count        varint
//                   per message:      target key (as below), number varint,
//                                     due_ms zigzag varint, payload length
//                                     varint, payload bytes
//                 inbox count         varint
//                   per sender:       sender key (as below), number varint
//                 a key:              length varint, the bytes a store
//                                     names it by (encode_state_key)
//   size-8     8  checksum: stable_hash (FNV-1a 64) of every byte before
//                 it, uint64 little-endian
//
// The size field tells a record cut short (or with bytes after it) from
// one damaged in place, so the message can say which. FNV-1a changes its
// result for any one changed byte (each step is a bijection of the hash),
// so a flipped byte is always caught; the checksum is no defence against
// deliberate forgery, only against damage. A record without messages is
// written as version 1, which readers before messaging read too.

#include "keylane/detail/state_record.hpp"

#include <algorithm>
#include <cstdio>

#include "keylane/errc.hpp"
#include "keylane/key.hpp"
#include "state_key.hpp"

namespace keylane::detail {

namespace {

constexpr std::string_view magic{"KLST"};
constexpr uint8_t version = 1;
constexpr uint8_t version_messages = 2;
constexpr size_t header_size = 4 + 1 + 8;
constexpr size_t checksum_size = 8;
// Header, checksum and the smallest fields: three one-byte varints, an
// empty state's one-byte length.
constexpr size_t min_size = header_size + 4 + checksum_size;

void put_u64(std::string& out, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((x >> (8 * i)) & 0xff);
}

void put_varint(std::string& out, uint64_t x) {
  while (x >= 0x80) {
    out += static_cast<char>((x & 0x7f) | 0x80);
    x >>= 7;
  }
  out += static_cast<char>(x);
}

// Zigzag: small negative numbers (-1, "no position") stay small.
void put_signed(std::string& out, int64_t x) {
  auto u = static_cast<uint64_t>(x);
  put_varint(out, (u << 1) ^ (x < 0 ? ~uint64_t{0} : 0));
}

void put_bytes(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out += s;
}

uint64_t get_u64(std::string_view s) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = x << 8 | static_cast<unsigned char>(s[static_cast<size_t>(i)]);
  return x;
}

caf::error malformed(std::string what) {
  return make_error(errc::state_store_failed,
                    "not a valid keylane state record: " + std::move(what));
}

std::string hex(std::string_view s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

std::string hex64(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

/// Reads the fields between header and checksum; every failure names the
/// field and the offset (from the record's start) where it went wrong.
class field_reader {
public:
  explicit field_reader(std::string_view body) : body_(body) {}

  [[nodiscard]] caf::error varint(uint64_t& x, const char* field) {
    x = 0;
    auto start = pos_;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == body_.size())
        return truncated(field, start);
      auto c = static_cast<unsigned char>(body_[pos_++]);
      if (shift == 63 && c > 1)
        return malformed(std::string{field} + " at offset " + offset(start)
                         + ": varint overflows 64 bits");
      x |= uint64_t{c & 0x7fu} << shift;
      if ((c & 0x80) == 0)
        return caf::none;
    }
    return malformed(std::string{field} + " at offset " + offset(start)
                     + ": varint longer than 10 bytes");
  }

  [[nodiscard]] caf::error signed_varint(int64_t& x, const char* field) {
    uint64_t u = 0;
    if (auto err = varint(u, field))
      return err;
    x = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
    return caf::none;
  }

  [[nodiscard]] caf::error bytes(std::string& s, const char* field) {
    auto start = pos_;
    uint64_t n = 0;
    if (auto err = varint(n, field))
      return err;
    if (n > left())
      return malformed(std::string{field} + " at offset " + offset(start)
                       + ": length " + std::to_string(n) + ", but only "
                       + std::to_string(left()) + " bytes remain");
    s.assign(body_.data() + pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return caf::none;
  }

  [[nodiscard]] size_t left() const noexcept { return body_.size() - pos_; }

  [[nodiscard]] size_t pos() const noexcept { return pos_; }

private:
  static std::string offset(size_t pos) {
    return std::to_string(header_size + pos);
  }

  [[nodiscard]] caf::error truncated(const char* field, size_t start) const {
    return malformed(std::string{field} + " at offset " + offset(start)
                     + ": runs past the end of the fields");
  }

  std::string_view body_;
  size_t pos_ = 0;
};

// The inbox's order: integer keys first, by value, then string keys.
bool sender_less(const key& a, const key& b) noexcept {
  if (a.is_integer() != b.is_integer())
    return a.is_integer();
  if (a.is_integer())
    return a.integer() < b.integer();
  return a.str() < b.str();
}

caf::error read_key(field_reader& in, key& k, const char* field) {
  std::string bytes;
  if (auto err = in.bytes(bytes, field))
    return err;
  auto got = decode_state_key(bytes);
  if (!got)
    return malformed(std::string{field} + " ending at offset "
                     + std::to_string(header_size + in.pos())
                     + ": no key is stored as " + hex(bytes));
  k = std::move(*got);
  return caf::none;
}

caf::error read_messages(field_reader& in, state_record& r) {
  uint64_t count = 0;
  if (auto err = in.varint(r.sent, "sent"))
    return err;
  if (auto err = in.varint(count, "outbox count"))
    return err;
  // A message takes at least four bytes, a sender two.
  if (count > in.left() / 4)
    return malformed("outbox count " + std::to_string(count)
                     + " cannot fit in the " + std::to_string(in.left())
                     + " bytes that remain");
  r.outbox.resize(static_cast<size_t>(count));
  for (auto& m : r.outbox) {
    if (auto err = read_key(in, m.to, "outbox target"))
      return err;
    if (auto err = in.varint(m.number, "outbox number"))
      return err;
    if (auto err = in.signed_varint(m.due_ms, "outbox due_ms"))
      return err;
    if (auto err = in.bytes(m.payload, "outbox payload"))
      return err;
  }
  if (auto err = in.varint(count, "inbox count"))
    return err;
  if (count > in.left() / 2)
    return malformed("inbox count " + std::to_string(count)
                     + " cannot fit in the " + std::to_string(in.left())
                     + " bytes that remain");
  r.inbox.resize(static_cast<size_t>(count));
  for (auto& [sender, number] : r.inbox) {
    if (auto err = read_key(in, sender, "inbox sender"))
      return err;
    if (auto err = in.varint(number, "inbox number"))
      return err;
  }
  return caf::none;
}

} // namespace

uint64_t state_record::received(const key& sender) const noexcept {
  auto i = std::lower_bound(
    inbox.begin(), inbox.end(), sender,
    [](const auto& e, const key& k) { return sender_less(e.first, k); });
  return i != inbox.end() && i->first == sender ? i->second : 0;
}

void state_record::receive(const key& sender, uint64_t number) {
  auto i = std::lower_bound(
    inbox.begin(), inbox.end(), sender,
    [](const auto& e, const key& k) { return sender_less(e.first, k); });
  if (i != inbox.end() && i->first == sender)
    i->second = number;
  else
    inbox.emplace(i, sender, number);
}

int64_t state_record::position(std::string_view stream) const noexcept {
  auto i = std::find_if(origins.begin(), origins.end(),
                        [&](const auto& o) { return o.first == stream; });
  return i == origins.end() ? -1 : i->second;
}

void state_record::advance(std::string_view stream, int64_t position) {
  auto i = std::find_if(origins.begin(), origins.end(),
                        [&](const auto& o) { return o.first == stream; });
  if (i == origins.end())
    origins.emplace_back(std::string{stream}, position);
  else
    i->second = position;
}

std::string encode_state_record(const state_record& r) {
  std::string out;
  size_t names = 0;
  for (const auto& o : r.origins)
    names += o.first.size() + 20;
  out.reserve(min_size + 30 + names + r.state.size());
  bool messages = r.sent != 0 || !r.outbox.empty() || !r.inbox.empty();
  out += magic;
  out += static_cast<char>(messages ? version_messages : version);
  put_u64(out, 0); // the size, known at the end
  put_varint(out, r.events);
  put_signed(out, r.taken_at_ms);
  put_varint(out, r.origins.size());
  for (const auto& [stream, pos] : r.origins) {
    put_bytes(out, stream);
    put_signed(out, pos);
  }
  put_bytes(out, r.state);
  if (messages) {
    put_varint(out, r.sent);
    put_varint(out, r.outbox.size());
    for (const auto& m : r.outbox) {
      put_bytes(out, encode_state_key(m.to));
      put_varint(out, m.number);
      put_signed(out, m.due_ms);
      put_bytes(out, m.payload);
    }
    put_varint(out, r.inbox.size());
    for (const auto& [sender, number] : r.inbox) {
      put_bytes(out, encode_state_key(sender));
      put_varint(out, number);
    }
  }
  std::string size;
  put_u64(size, out.size() + checksum_size);
  out.replace(magic.size() + 1, 8, size);
  put_u64(out, stable_hash(out));
  return out;
}

caf::expected<state_record> decode_state_record(std::string_view bytes) {
  auto n = bytes.size();
  auto head = bytes.substr(0, magic.size());
  if (head != magic.substr(0, head.size()))
    return malformed("bad magic: starts with " + hex(head) + ", expected "
                     + hex(magic) + " (\"KLST\")");
  if (n < magic.size() + 1)
    return malformed("truncated: " + std::to_string(n)
                     + " bytes, shorter than the header");
  auto v = static_cast<uint8_t>(bytes[magic.size()]);
  if (v != version && v != version_messages)
    return malformed("unknown version " + std::to_string(v)
                     + " (this build reads version "
                     + std::to_string(version) + ", and "
                     + std::to_string(version_messages)
                     + " for records with messages; a newer keylane wrote "
                       "it?)");
  if (n < header_size)
    return malformed("truncated: " + std::to_string(n)
                     + " bytes, shorter than the header");
  auto declared = get_u64(bytes.substr(magic.size() + 1, 8));
  if (declared < min_size)
    return malformed("the header declares " + std::to_string(declared)
                     + " bytes, less than the smallest record ("
                     + std::to_string(min_size) + ")");
  if (n < declared)
    return malformed("truncated: " + std::to_string(n) + " of the "
                     + std::to_string(declared) + " bytes its header declares");
  if (n > declared)
    return malformed(std::to_string(n - declared)
                     + (n - declared == 1 ? " trailing byte" : " trailing bytes")
                     + " after the "
                     + std::to_string(declared) + " bytes its header declares");
  auto stored = get_u64(bytes.substr(n - checksum_size));
  auto computed = stable_hash(bytes.substr(0, n - checksum_size));
  if (stored != computed)
    return malformed("checksum mismatch (stored " + hex64(stored)
                     + ", computed " + hex64(computed)
                     + "): the record is damaged");
  // The checksum holds: what follows fails only for bytes a different
  // (broken) encoder wrote.
  field_reader in{bytes.substr(header_size, n - header_size - checksum_size)};
  state_record r;
  uint64_t count = 0;
  if (auto err = in.varint(r.events, "events"))
    return err;
  if (auto err = in.signed_varint(r.taken_at_ms, "taken_at_ms"))
    return err;
  if (auto err = in.varint(count, "origin count"))
    return err;
  // Each origin takes at least two bytes: a name length and a position.
  if (count > in.left() / 2)
    return malformed("origin count " + std::to_string(count)
                     + " cannot fit in the " + std::to_string(in.left())
                     + " bytes that remain");
  r.origins.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    std::string stream;
    int64_t pos = 0;
    if (auto err = in.bytes(stream, "origin stream name"))
      return err;
    if (auto err = in.signed_varint(pos, "origin position"))
      return err;
    r.origins.emplace_back(std::move(stream), pos);
  }
  if (auto err = in.bytes(r.state, "state"))
    return err;
  if (v == version_messages)
    if (auto err = read_messages(in, r))
      return err;
  if (in.left() != 0)
    return malformed(std::to_string(in.left())
                     + (in.left() == 1 ? " unread byte" : " unread bytes")
                     + " between the state and the checksum");
  return r;
}

} // namespace keylane::detail
