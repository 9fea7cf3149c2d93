// SPDX-License-Identifier: Apache-2.0
#include "protocol.hpp"

#include <cctype>
#include <charconv>
#include <vector>

namespace game {

namespace {

std::vector<std::string_view> words(std::string_view s, size_t most) {
  std::vector<std::string_view> out;
  while (!s.empty() && out.size() + 1 < most) {
    auto sp = s.find(' ');
    out.push_back(s.substr(0, sp));
    if (sp == std::string_view::npos)
      return out;
    s.remove_prefix(sp + 1);
  }
  if (!s.empty())
    out.push_back(s);
  return out;
}

template <class T>
bool number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

// Characters of UTF-8 text: every byte but the continuation bytes
// (10xxxxxx) starts one. Text frames reach us checked by Beast (a frame
// that is not UTF-8 closes the connection with 1007), so this counts code
// points.
size_t characters(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool name_ok(std::string_view s) {
  if (s.empty() || s.size() > max_name)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

} // namespace

bool parse_command(std::string_view frame, client_command& out,
                   std::string& why) {
  why = "bad_command";
  auto w = words(frame, frame.compare(0, 5, "chat ") == 0 ? 2 : 5);
  if (w.empty())
    return false;
  if (w[0] == "join" && w.size() == 3) {
    if (!name_ok(w[2])) {
      why = "bad_name";
      return false;
    }
    out.what = client_command::kind::join;
    out.room = std::string{w[1]};
    out.name = std::string{w[2]};
    return true;
  }
  if (w[0] == "input" && w.size() == 4) {
    out.what = client_command::kind::input;
    return number(w[1], out.seq) && number(w[2], out.dx)
           && number(w[3], out.dy) && out.dx >= -1 && out.dx <= 1
           && out.dy >= -1 && out.dy <= 1;
  }
  if (w[0] == "chat" && w.size() == 2) {
    if (characters(w[1]) > max_chat) {
      why = "chat_too_long";
      return false;
    }
    out.what = client_command::kind::chat;
    out.text.clear();
    // Snapshots and chat lines are line-based: no control characters.
    for (char c : w[1])
      out.text += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    return true;
  }
  if (w[0] == "leave" && w.size() == 1) {
    out.what = client_command::kind::leave;
    return true;
  }
  return false;
}

} // namespace game
