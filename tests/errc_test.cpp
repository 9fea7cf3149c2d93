// SPDX-License-Identifier: Apache-2.0
// Tests of keylane::errc as a std::error_code enum: the "keylane" category,
// its messages, and the conversion of the CAF errors keylane returns.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <system_error>
#include <type_traits>

#include <caf/sec.hpp>

#include "keylane/errc.hpp"

namespace kl = keylane;

static_assert(std::is_error_code_enum_v<kl::errc>,
              "errc must be usable as a std::error_code");
static_assert(std::is_convertible_v<kl::errc, std::error_code>,
              "std::error_code ec = errc::window_full; must compile");

TEST_CASE("an errc converts to a std::error_code of the keylane category",
          "[errc]") {
  std::error_code ec = kl::errc::window_full;
  CHECK(ec);
  CHECK(ec == kl::errc::window_full);
  CHECK(ec != kl::errc::key_backlog_full);
  CHECK(ec.value() == static_cast<int>(kl::errc::window_full));
  CHECK(std::string{ec.category().name()} == "keylane");
  CHECK(&ec.category() == &kl::error_category());
  CHECK(ec.message() == "the window of accepted, undelivered events is full");
  CHECK_FALSE(std::error_code{kl::errc::none});
  CHECK(make_error_code(kl::errc::stopped) == kl::errc::stopped); // by ADL
  CHECK(ec != std::make_error_code(std::errc::io_error));
}

TEST_CASE("every errc has its own name and a message of its own",
          "[errc]") {
  std::set<std::string> names;
  std::set<std::string> messages;
  int count = 0;
  for (int i = 0; i <= static_cast<int>(kl::errc::timers_full); ++i) {
    auto x = static_cast<kl::errc>(i);
    std::string name = kl::to_string(x);
    std::string message = std::error_code{x}.message();
    INFO(i << ": " << name << ": " << message);
    CHECK(name != "unknown");
    CHECK(message != "unknown keylane error");
    names.insert(name);
    messages.insert(message);
    ++count;
  }
  CHECK(names.size() == static_cast<size_t>(count));
  CHECK(messages.size() == static_cast<size_t>(count));
  CHECK(kl::error_category().message(300) == "unknown keylane error");
  CHECK(kl::error_category().message(-1) == "unknown keylane error");
}

TEST_CASE("a keylane caf::error converts to its std::error_code",
          "[errc]") {
  auto err = kl::make_error(kl::errc::invalid_config, "app.toml:3: bad");
  CHECK(kl::to_error_code(err) == kl::errc::invalid_config);
  CHECK_FALSE(kl::to_error_code(caf::error{}));
  // CAF's own errors have no errc: a generic code, never a keylane one.
  auto caf_err = caf::make_error(caf::sec::request_timeout);
  auto code = kl::to_error_code(caf_err);
  CHECK(code);
  CHECK(&code.category() != &kl::error_category());
  CHECK(code == std::errc::io_error);
}
