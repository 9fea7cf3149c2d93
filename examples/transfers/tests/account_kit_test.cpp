// SPDX-License-Identifier: Apache-2.0
// The transfers account under keylane::testing: a credit told across keys
// is applied exactly once across a crash that loses the receiver's last
// checkpoint, and (the control) lost without `messaging.exactly_once`.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include <keylane/testing/kit.hpp>

#include "../account.hpp"

using namespace std::chrono_literals;
using transfers::transfer;
using account_kit = keylane::testing::kit<transfer, long>;

namespace {

account_kit accounts(bool exactly_once) {
  keylane::settings cfg;
  cfg.state_store = keylane::state_backend::rocksdb; // kept across crashes
  cfg.messaging_exactly_once = exactly_once;
  return account_kit{[](const keylane::handler_params&) {
                       return std::make_unique<transfers::account_handler>();
                     },
                     cfg};
}

// Ann opens with 100 (input 1) and sends Bob 30 (input 2); her state is
// written at the checkpoint, and Bob's is lost in the crash that follows.
// The source sends both inputs again, as a Kafka source does.
long bob_after_crash(account_kit& kit) {
  kit.submit("ann", transfer{"", 100, true, 1});
  kit.submit("ann", transfer{"bob", 30, false, 2});
  kit.advance(100ms); // ann's checkpoint; the credit leaves with it
  kit.crash({"bob"});
  kit.submit("ann", transfer{"", 100, true, 1});
  kit.submit("ann", transfer{"bob", 30, false, 2});
  kit.advance(1s);
  kit.crash(); // and once more, after every write: nothing is applied twice
  kit.submit("ann", transfer{"", 0, true, 3});
  kit.submit("bob", transfer{"", 0, true, 1});
  kit.run_until_idle();
  using transfers::account_handler;
  CHECK(kit.handler_of<account_handler>("ann").state().balance == 70);
  return kit.handler_of<account_handler>("bob").state().balance;
}

} // namespace

TEST_CASE("a told credit reaches its account once across crashes that lose "
          "the receiver's checkpoint (kit)",
          "[transfers][kit]") {
  auto kit = accounts(true);
  CHECK(bob_after_crash(kit) == 30);
}

TEST_CASE("without exactly_once the same crash loses the credit (kit)",
          "[transfers][kit]") {
  auto kit = accounts(false);
  CHECK(bob_after_crash(kit) == 0);
}
