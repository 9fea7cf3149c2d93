// SPDX-License-Identifier: Apache-2.0
// Shows that an installed keylane with its components is usable from
// outside: the public headers compile, a runtime configured from TOML
// (toml++) with an SQLite park store (keylane::sqlite) and the metrics
// endpoint (keylane::metrics), both named by the settings alone, starts,
// processes events and drains, and a RocksDB state store (keylane::state)
// keeps what was written across a reopen, so the libraries and every
// dependency they need at link and run time are found. keylane/metrics.hpp
// compiles with the include path keylane::metrics brings (prometheus-cpp).
#include <atomic>
#include <iostream>
#include <string>

#include <keylane/config_loader.hpp>
#include <keylane/errc.hpp>
#include <keylane/key.hpp>
#include <keylane/metrics.hpp>
#include <keylane/runtime.hpp>
#include <keylane/state_store.hpp>

struct doubling : keylane::handler<int, int> {
  void on_event(int& v, keylane::completion<int> done) override {
    done.ok(2 * v);
  }
};

int main(int argc, char** argv) {
  std::cout << "stable_hash(\"acct-1\") = " << keylane::stable_hash("acct-1")
            << '\n'
            << "to_string(errc::window_full) = "
            << keylane::to_string(keylane::errc::window_full) << '\n';
  std::string park_path = argc > 1 ? argv[1] : "consumer-park.db";
  auto cfg = keylane::parse("[runtime]\nwindow = 64\n"
                            "[park]\nstore = \"sqlite\"\npath = \""
                              + park_path + "\"\n",
                            "consumer.toml");
  if (!cfg) {
    std::cout << keylane::render(cfg.error()) << '\n';
    return 2;
  }
  cfg->threads = 2;
  cfg->metrics_listen = "127.0.0.1:0"; // any free port (the file wants 1..65535)
  std::atomic<int> sum{0};
  keylane::handler_factory make = [](const keylane::handler_params&) {
    return std::make_unique<doubling>();
  };
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
    if (!(*rt)->submit("acct-" + std::to_string(i % 2), i))
      return 1;
  if (!(*rt)->drain())
    return 1;
  if (keylane::metrics_collectable(**rt)->Collect().empty())
    return 1;
  (*rt)->stop();
  std::cout << "sum of doubled 1..3 = " << sum.load() << '\n';
  auto state_path = park_path + ".state";
  {
    auto st = keylane::open_rocksdb_state_store(state_path);
    if (!st || (*st)->write({{"acct-1", "state bytes"}}, true))
      return 1;
  }
  auto st = keylane::open_rocksdb_state_store(state_path, true);
  if (!st) {
    std::cout << keylane::render(st.error()) << '\n';
    return 2;
  }
  auto bytes = (*st)->read("acct-1");
  std::cout << "state of acct-1 after a reopen = "
            << (bytes && *bytes ? **bytes : std::string{"(none)"}) << '\n';
}
