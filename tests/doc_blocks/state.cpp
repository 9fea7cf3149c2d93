// SPDX-License-Identifier: Apache-2.0
// doc:begin docs/state.md
#include <keylane/stateful_handler.hpp>

struct account { long balance = 0; std::vector<long> recent; };

template <class Inspector>             // the codec: CAF's inspect is enough
auto inspect(Inspector& f, account& x) {
  return f(caf::meta::type_name("account"), x.balance, x.recent);
}

struct balances : keylane::stateful_handler<long, long, account> {
  void on_event(long& amount, keylane::completion<long> done) override {
    if (state().balance + amount < 0)
      return done.skip();    // refused: an answer, not a failure to retry
    state().balance += amount;
    done.ok(state().balance);
  }
};
// doc:end
// The block above opens the file, so its #include is all it compiles with.

#include <map>

#include <keylane/handler_registry.hpp>

// The order book the journal example assumes.
struct order { long price = 0; long quantity = 0; };
struct fill { long price = 0; long quantity = 0; };
struct level { long quantity = 0; };
struct book_state { std::map<long, level> levels; };

template <class Inspector>
auto inspect(Inspector& f, level& x) { return f(x.quantity); }
template <class Inspector>
auto inspect(Inspector& f, book_state& x) { return f(x.levels); }

// doc:begin docs/state.md
struct book : keylane::stateful_handler<order, fill, book_state> {
  book() : stateful_handler(keylane::rollback_by::journal) {}
  void on_event(order& o, keylane::completion<fill> done) override {
    auto& level = state().levels[o.price];
    undo([p = o.price, old = level](book_state& s) { s.levels[p] = old; });
    level.quantity += o.quantity;
    done.ok(fill{o.price, level.quantity}); // matching left out
  }
};
// doc:end

// Registering a handler builds what a runtime needs of it (its state's
// codec too), so the blocks above are compiled as a program uses them.
void add_state_doc_handlers(keylane::handler_registry& reg) {
  reg.add<balances>("balances");
  reg.add<book>("book");
}
