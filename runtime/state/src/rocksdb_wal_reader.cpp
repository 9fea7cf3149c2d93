// SPDX-License-Identifier: Apache-2.0
#include "rocksdb_wal_reader.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "keylane/errc.hpp"

namespace keylane::detail {

namespace {

namespace fs = std::filesystem;

constexpr size_t block_size = 32768;
constexpr size_t header_size = 7;
constexpr size_t recycled_header_size = 11;

// db/log_format.h's record types.
enum : uint8_t {
  zero_type = 0,
  full_type = 1,
  first_type = 2,
  middle_type = 3,
  last_type = 4,
  recycled_full_type = 5,
  recycled_last_type = 8,
};

uint32_t fixed32(const char* p) noexcept {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(p[i]);
  return x;
}

// RocksDB stores a CRC of data that may hold CRCs "masked" (util/crc32c.h).
uint32_t unmask(uint32_t masked) noexcept {
  auto rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

bool all_zero(const std::string& bytes, size_t from, size_t to) {
  return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                     bytes.begin() + static_cast<std::ptrdiff_t>(to),
                     [](char c) { return c == 0; });
}

/// Reads one log's records into `out`.
class log_reader {
public:
  explicit log_reader(std::vector<wal_record>& out) : out_(out) {}

  void read(const std::string& bytes) {
    size_t pos = 0;
    while (pos < bytes.size()) {
      auto left_in_block = block_size - pos % block_size;
      auto next_block = std::min(pos + left_in_block, bytes.size());
      if (left_in_block < header_size) { // the block's zero trailer
        pos = next_block;
        continue;
      }
      if (all_zero(bytes, pos, std::min(pos + header_size, bytes.size()))) {
        // Padding: the rest of the block is zeros, or the log ends here.
        if (!all_zero(bytes, pos, next_block))
          lose();
        pos = next_block;
        continue;
      }
      if (bytes.size() - pos < header_size) { // a header cut off
        lose();
        break;
      }
      const char* h = bytes.data() + pos;
      auto length = static_cast<size_t>(static_cast<uint8_t>(h[4]))
                    | static_cast<size_t>(static_cast<uint8_t>(h[5])) << 8;
      auto type = static_cast<uint8_t>(h[6]);
      auto recycled = type >= recycled_full_type && type <= recycled_last_type;
      auto head = recycled ? recycled_header_size : header_size;
      if (head + length > left_in_block) {
        // A record never crosses a block: the header is damaged, and where
        // the next record of this block starts is unknown.
        lose();
        pos = next_block;
        continue;
      }
      if (pos + head + length > bytes.size()) { // cut off at the end
        lose();
        break;
      }
      auto crc = crc32c_extend(0, h + 6, 1);
      if (recycled)
        crc = crc32c_extend(crc, h + header_size, 4);
      crc = crc32c_extend(crc, h + head, length);
      auto intact = crc == unmask(fixed32(h));
      take(recycled ? static_cast<uint8_t>(type - 4) : type, intact,
           std::string_view{h + head, length});
      pos += head + length;
    }
    if (assembling_) // a first without its last
      lose();
  }

private:
  void take(uint8_t type, bool intact, std::string_view payload) {
    switch (type) {
      case full_type:
        if (assembling_)
          lose();
        emit(intact, std::string{payload});
        break;
      case first_type:
        if (assembling_)
          lose();
        assembling_ = true;
        buf_.assign(payload);
        buf_intact_ = intact;
        break;
      case middle_type:
      case last_type:
        if (!assembling_) { // the rest of a record whose start was lost
          lose();
          break;
        }
        buf_.append(payload);
        buf_intact_ = buf_intact_ && intact;
        if (type == last_type) {
          assembling_ = false;
          emit(buf_intact_, std::move(buf_));
          buf_.clear();
        }
        break;
      default:
        // A record of another kind (compression, timestamp sizes) holds
        // no writes; damaged, its type may have been a write's.
        if (!intact)
          lose();
    }
  }

  void emit(bool intact, std::string payload) {
    wal_record r;
    r.what = intact ? wal_record::kind::whole : wal_record::kind::damaged;
    r.payload = std::move(payload);
    out_.push_back(std::move(r));
  }

  /// Marks an unreadable stretch, dropping a record being assembled.
  void lose() {
    assembling_ = false;
    buf_.clear();
    if (out_.empty() || out_.back().what != wal_record::kind::lost)
      out_.push_back(wal_record{wal_record::kind::lost, {}});
  }

  std::vector<wal_record>& out_;
  bool assembling_ = false;
  bool buf_intact_ = true;
  std::string buf_;
};

} // namespace

uint32_t crc32c_extend(uint32_t crc, const char* data, size_t n) noexcept {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      auto c = i;
      for (int b = 0; b < 8; ++b)
        c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i)
    crc = table[(crc ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (crc >> 8);
  return ~crc;
}

caf::expected<std::vector<wal_record>>
read_wal_records(const std::string& dir) {
  std::vector<std::pair<uint64_t, fs::path>> logs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{dir, ec}) {
    auto name = e.path().filename().string();
    if (e.path().extension() != ".log" || name.size() <= 4)
      continue;
    auto stem = name.substr(0, name.size() - 4);
    if (!std::all_of(stem.begin(), stem.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    logs.emplace_back(std::strtoull(stem.c_str(), nullptr, 10), e.path());
  }
  if (ec)
    return make_error(errc::state_store_failed,
                      "cannot list " + dir + ": " + ec.message());
  std::sort(logs.begin(), logs.end());
  std::vector<wal_record> out;
  log_reader reader{out};
  for (const auto& [number, file] : logs) {
    std::ifstream in{file, std::ios::binary};
    std::string bytes{std::istreambuf_iterator<char>{in}, {}};
    if (in.bad() || !in.is_open())
      return make_error(errc::state_store_failed,
                        "cannot read " + file.string());
    reader.read(bytes);
  }
  return out;
}

} // namespace keylane::detail
