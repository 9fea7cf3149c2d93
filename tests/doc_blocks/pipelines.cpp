// SPDX-License-Identifier: Apache-2.0
#include <memory>
#include <string>

#include <keylane/pipeline.hpp>

// What docs/pipelines.md's builder assumes: an item, what each stage makes
// of it, a stateless and a stateful stage, and the total's store.
namespace pipelines_doc {

struct item { std::string account; long cents = 0; };
struct fetched { std::string account; long cents = 0; };
struct priced { std::string account; long total = 0; };
struct totals_store { long grand_total = 0; };

struct fetch_handler : keylane::handler<item, fetched> {
  void on_event(item& i, keylane::completion<fetched> done) override {
    done.ok(fetched{i.account, i.cents});
  }
};

struct total_handler : keylane::handler<fetched, priced> {
  explicit total_handler(totals_store& store) : store_(store) {}
  void on_event(fetched& f, keylane::completion<priced> done) override {
    store_.grand_total += f.cents;
    done.ok(priced{f.account, store_.grand_total});
  }

private:
  totals_store& store_;
};

bool start(const keylane::settings& cfg, totals_store& store) {
// doc:begin docs/pipelines.md
auto p = keylane::pipeline_builder<item>{}
  .stage<fetched>({"fetch", keylane::stage_kind::unordered, 8},
                  [] { return std::make_unique<fetch_handler>(); })
  .stage<priced>({"total", keylane::stage_kind::ordered, 8},
                 [&] { return std::make_unique<total_handler>(store); })
  .start(cfg, [](keylane::pipeline_result<priced>&) { /* in order */ });
// doc:end
  return static_cast<bool>(p);
}

} // namespace pipelines_doc
