// SPDX-License-Identifier: Apache-2.0
// doc:begin docs/kafka.md
#include <cstdio>
#include <keylane/kafka/source.hpp>

struct total { long value = 0; };
template <class Inspector>
auto inspect(Inspector& f, total& x) { return f(x.value); }

// The running total lives in keyed state ([state] store): a handler member
// would start again from 0 whenever the key's lane retires.
struct balance
  : keylane::stateful_handler<keylane::kafka::record, std::string, total> {
  void on_event(keylane::kafka::record& r,
                keylane::completion<std::string> done) override {
    state().value += std::stol(r.value);  // r.topic, r.partition, r.offset
    done.ok(std::to_string(state().value)); // identify the record for dedup
  }
};

int main() {
  keylane::handler_registry reg;
  reg.add<balance>("balance");
  auto cfg = keylane::kafka::load("app.toml");        // runtime + [kafka]
  if (!cfg) return puts(keylane::render(cfg.error()).c_str()), 2;
  auto src = keylane::kafka::source::start(std::move(*cfg), reg,
    [](keylane::kafka::record_event&) { /* output, consumer thread */ });
  if (!src) return puts(keylane::render(src.error()).c_str()), 2;
  // ... until shutdown:
  (*src)->stop();   // finish in-flight (revoke_timeout_ms), commit, leave
}
// doc:end

// The exactly-once section's handler, registered as a program would.
namespace exactly_once {
// doc:begin docs/kafka.md
struct totals { long sum = 0; long count = 0; };
template <class Inspector>                    // how the state is written
auto inspect(Inspector& f, totals& x) { return f(x.sum, x.count); }

struct balance : keylane::stateful_handler<keylane::kafka::record,
                                           std::string, totals> {
  void on_event(keylane::kafka::record& r,
                keylane::completion<std::string> done) override {
    state().sum += std::stol(r.value);            // only this key's state
    state().count += 1;
    done.ok(std::to_string(state().sum));
  }
};
// doc:end

void add_handler(keylane::handler_registry& reg) { reg.add<balance>("balance"); }
} // namespace exactly_once
