// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <iostream>
#include <memory>

#include <keylane/runtime.hpp>

// docs/operations.md's calls on a runtime; `doc_blocks operations` runs the
// parked-key one on a key it parks, and prints what the doc shows.
namespace operations_doc {

using runtime = keylane::runtime<long, long>;

void show_parked(runtime& run) {
// doc:begin docs/operations.md
// run: the keylane::runtime<Payload, Result> that start() returned (**rt).
// Each call returns a caf::expected: the park store may fail.
if (auto keys = run.parked_keys())          // key, count, first reason, when
  for (auto& p : *keys)
    printf("%s: %llu parked, first: %s\n", p.k.to_string().c_str(),
           (unsigned long long)p.count, p.first_reason.c_str());
auto events = run.parked_events("acct-9");  // payloads, seqs, reasons, in order
auto replayed = run.replay("acct-9");  // runs them again, in order, before newer
                                       // events of the key (new sequence numbers)
auto dropped = run.discard("acct-9");  // drops them; how many
// doc:end
}

void reload(caf::expected<std::unique_ptr<runtime>>& rt) {
// doc:begin docs/operations.md
auto rep = (*rt)->reload("/etc/app/keylane.toml");
if (!rep)                       // bad file: nothing changed
  std::cerr << keylane::render(rep.error()) << '\n';
else
  for (auto& c : rep->needs_restart)
    std::cerr << c.key << " changes at the next start\n";
// doc:end
}

// Every event of acct-9 fails for good, so the key parks.
struct no_such_account : keylane::handler<long, long> {
  void on_event(long&, keylane::completion<long> done) override {
    done.fail_permanently("no such account");
  }
};

} // namespace operations_doc

int run_operations_doc() {
  using namespace operations_doc;
  auto rt = runtime::start(keylane::settings{},
                           [](const keylane::handler_params&) {
                             return std::make_unique<no_such_account>();
                           },
                           // drain() waits for the output to be taken
                           [](keylane::event<long, long>&) {});
  if (!rt)
    return std::fprintf(stderr, "%s\n", keylane::render(rt.error()).c_str()), 2;
  for (long amount : {100L, 200L})
    if (!(*rt)->submit("acct-9", amount))
      return 1;
  if (!(*rt)->drain())
    return 1;
  show_parked(**rt);
  return 0;
}
