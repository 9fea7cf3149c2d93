// SPDX-License-Identifier: Apache-2.0
// A handler tested with the installed keylane::testing, without a test
// framework: a doubling that answers 50 ms later, on the kit's clock.
#include <chrono>
#include <cstdio>
#include <memory>

#include <keylane/handler.hpp>
#include <keylane/testing/kit.hpp>

namespace {

class slow_doubler final : public keylane::handler<int, int> {
public:
  void on_event(int& x, keylane::completion<int> done) override {
    run_later(std::chrono::milliseconds(50),
              [v = x * 2, d = std::move(done)]() mutable { d.ok(v); });
  }
};

} // namespace

int main() {
  keylane::testing::kit<int, int> kit{[](const keylane::handler_params&) {
    return std::make_unique<slow_doubler>();
  }};
  auto id = kit.submit("k", 21);
  kit.advance(std::chrono::milliseconds(49));
  bool early = kit.status(id) != keylane::outcome::pending;
  kit.advance(std::chrono::milliseconds(1));
  std::printf("kit: %s %d at %lld ms%s\n", keylane::to_string(kit.status(id)),
              kit.result(id).value_or(-1),
              static_cast<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(
                  kit.now())
                  .count()),
              early ? " (too early!)" : "");
  return kit.result(id) == 42 && !early ? 0 : 1;
}
