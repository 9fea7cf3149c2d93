// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <catch2/catch.hpp>

#include "../protocol.hpp"

namespace {

std::string times(size_t n, const std::string& s) {
  std::string out;
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

} // namespace

// "é" takes two bytes in UTF-8, "€" three, "😀" four.
TEST_CASE("a chat line of 200 characters is accepted however many bytes "
          "they take",
          "[game_rooms][protocol]") {
  for (std::string ch : {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    CAPTURE(ch);
    auto text = times(game::max_chat, ch);
    game::client_command cmd;
    std::string why;
    REQUIRE(game::parse_command("chat " + text, cmd, why));
    CHECK(cmd.what == game::client_command::kind::chat);
    CHECK(cmd.text == text);
  }
}

TEST_CASE("a chat line of 201 characters is refused with chat_too_long",
          "[game_rooms][protocol]") {
  for (std::string ch : {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    CAPTURE(ch);
    game::client_command cmd;
    std::string why;
    CHECK_FALSE(game::parse_command("chat " + times(game::max_chat + 1, ch),
                                    cmd, why));
    CHECK(why == "chat_too_long");
  }
}
