// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/spill_record.hpp"

#include <cstring>

#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

// The file lives and dies with one process, so host byte order is fine.
template <class T>
void put(std::string& out, T x) {
  char buf[sizeof(T)];
  std::memcpy(buf, &x, sizeof(T));
  out.append(buf, sizeof(T));
}

void put_text(std::string& out, std::string_view s) {
  put(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

class reader {
public:
  explicit reader(std::string_view in) : in_(in) {}
  template <class T>
  bool get(T& x) {
    if (in_.size() < sizeof(T))
      return false;
    std::memcpy(&x, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  bool get_text(std::string& s) {
    uint32_t n = 0;
    if (!get(n) || in_.size() < n)
      return false;
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  [[nodiscard]] bool done() const noexcept { return in_.empty(); }

private:
  std::string_view in_;
};

int64_t ticks(clock::time_point t) {
  return t.time_since_epoch().count();
}

clock::time_point from_ticks(int64_t n) {
  return clock::time_point{clock::duration{n}};
}

} // namespace

std::string encode(const spill_record& r) {
  std::string out;
  out.reserve(64 + r.payload.size() + (r.result ? r.result->size() : 0)
              + r.error.size());
  put(out, r.seq);
  put(out, static_cast<uint8_t>(r.k.is_integer() ? 1 : 0));
  if (r.k.is_integer())
    put(out, r.k.integer());
  else
    put_text(out, r.k.str());
  put(out, static_cast<uint8_t>(r.status));
  put_text(out, r.error);
  put(out, r.attempts);
  put(out, r.park_id);
  put(out, ticks(r.submitted));
  put(out, ticks(r.started));
  put_text(out, r.payload);
  put(out, static_cast<uint8_t>(r.result ? 1 : 0));
  if (r.result)
    put_text(out, *r.result);
  return out;
}

caf::expected<spill_record> decode_spill(std::string_view bytes) {
  reader in{bytes};
  spill_record r;
  uint8_t integer = 0, status = 0, has_result = 0;
  int64_t submitted = 0, started = 0;
  bool ok = in.get(r.seq) && in.get(integer);
  if (ok && integer != 0) {
    uint64_t x = 0;
    ok = in.get(x);
    r.k = keylane::key{x};
  } else if (ok) {
    std::string s;
    ok = in.get_text(s);
    r.k = keylane::key{std::move(s)};
  }
  ok = ok && in.get(status) && in.get_text(r.error) && in.get(r.attempts)
       && in.get(r.park_id) && in.get(submitted) && in.get(started)
       && in.get_text(r.payload) && in.get(has_result);
  if (ok && has_result != 0) {
    std::string s;
    ok = in.get_text(s);
    r.result = std::move(s);
  }
  if (!ok || !in.done())
    return make_error(errc::spill_failed, "a spill record is malformed");
  r.status = static_cast<outcome>(status);
  r.submitted = from_ticks(submitted);
  r.started = from_ticks(started);
  return r;
}

} // namespace keylane::detail
