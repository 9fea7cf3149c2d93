// SPDX-License-Identifier: Apache-2.0
// Shows that the core of an installed keylane works alone: a runtime from
// TOML with the in-memory park and state stores starts, processes events
// keyed by int64_t and drains; and a config naming a component the program
// does not link (park.store = "sqlite") is refused with the target to link.
#include <atomic>
#include <cstdint>
#include <iostream>
#include <string>
#include <system_error>

#include <keylane/config_loader.hpp>
#include <keylane/errc.hpp>
#include <keylane/key.hpp>
#include <keylane/runtime.hpp>
#include <keylane/version.hpp>

struct doubling : keylane::handler<int, int> {
  void on_event(int& v, keylane::completion<int> done) override {
    done.ok(2 * v);
  }
};

int main() {
  std::error_code ec = keylane::errc::window_full;
  std::cout << "keylane " << keylane::version << '\n'
            << "error_code(errc::window_full) = " << ec.category().name()
            << ':' << ec.value() << '\n';
  keylane::handler_factory make = [](const keylane::handler_params&) {
    return std::make_unique<doubling>();
  };
  auto cfg = keylane::parse("[runtime]\nwindow = 64\n"
                            "[state]\nstore = \"memory\"\n",
                            "core.toml");
  if (!cfg) {
    std::cout << keylane::render(cfg.error()) << '\n';
    return 2;
  }
  cfg->threads = 2;
  std::atomic<int> sum{0};
  auto rt = keylane::runtime<int, int>::start(
    *cfg, make, [&sum](keylane::event<int, int>& e) {
      if (e.result)
        sum += *e.result;
    });
  if (!rt) {
    std::cout << keylane::render(rt.error()) << '\n';
    return 2;
  }
  for (int i = 1; i <= 3; ++i)
    if (!(*rt)->submit(int64_t{i % 2}, i))
      return 1;
  if (!(*rt)->drain())
    return 1;
  (*rt)->stop();
  std::cout << "sum of doubled 1..3 = " << sum.load() << '\n';

  auto sqlite = keylane::parse("[park]\nstore = \"sqlite\"\n"
                               "path = \"core-park.db\"\n",
                               "core-sqlite.toml");
  if (!sqlite)
    return 2;
  auto refused = keylane::runtime<int, int>::start(*sqlite, make,
                                                   [](auto&) {});
  if (refused)
    return 1;
  std::cout << "without keylane::sqlite: " << keylane::render(refused.error())
            << '\n';
}
