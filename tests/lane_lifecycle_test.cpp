// SPDX-License-Identifier: Apache-2.0
// A lane's life: lanes live in shard actors that serve many keys one after
// another, so nothing of a retired key's handler may reach a later key, and
// a lane that ran dry lingers for its key's next event.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include <keylane/runtime.hpp>

using namespace keylane;
using namespace std::chrono_literals;

namespace {

using rt_type = runtime<int, int>;
using late_atom = caf::atom_constant<caf::atom("late")>;
using answer_atom = caf::atom_constant<caf::atom("answer")>;

// Answers every request after `delay`, so the answer finds the asking lane
// retired (its shard lives on).
class slow_echo : public caf::event_based_actor {
public:
  slow_echo(caf::actor_config& cfg, std::chrono::milliseconds delay,
            std::atomic<int>* sent)
    : caf::event_based_actor(cfg), delay_(delay), sent_(sent) {}

  caf::behavior make_behavior() override {
    return {
      [this](late_atom, int x) {
        auto rp = make_response_promise();
        auto id = ++next_;
        pending_.emplace(id, rp);
        delayed_send(this, delay_, answer_atom::value, id, x);
        return rp;
      },
      [this](answer_atom, uint64_t id, int x) {
        auto i = pending_.find(id);
        if (i == pending_.end())
          return;
        i->second.deliver(x);
        pending_.erase(i);
        ++*sent_;
      },
    };
  }

private:
  std::chrono::milliseconds delay_;
  std::atomic<int>* sent_; // answers delivered
  uint64_t next_ = 0;
  std::map<uint64_t, caf::response_promise> pending_;
};

struct counters {
  std::atomic<int> live{0};
  std::atomic<int> answers_after_retire{0};
  std::atomic<int> answers{0};
  std::atomic<int> sent{0};
  caf::actor echo;
};

// Finishes each event at once but leaves a request open whose answer
// comes after the lane retired; the answer's handler checks its handler
// is still the live one.
struct leaves_request_open : handler<int, int> {
  explicit leaves_request_open(counters* c) : c_(c) { ++c_->live; }
  ~leaves_request_open() override { --c_->live; }
  void on_event(int& x, completion<int> done) override {
    auto alive = alive_;
    self()->request(c_->echo, caf::infinite, late_atom::value, x)
      .then([c = c_, alive](int) {
        ++c->answers;
        if (!*alive)
          ++c->answers_after_retire;
      },
      [](caf::error&) {});
    done.ok(x);
  }
  void on_retire(const key&) override { *alive_ = false; }
  counters* c_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace

TEST_CASE("a retiring lane drops the response handlers of requests its "
          "handler left open, so an answer never runs after its handler "
          "retired",
          "[lane][shard]") {
  counters c;
  settings cfg;
  cfg.max_attempts = 1; // the default before 0.2.0
  cfg.threads = 2;
  cfg.max_active_keys = 2;
  cfg.order = order_mode::none;
  // Lanes linger until a waiting key needs the slot, so the last two keys'
  // lanes are still alive when their answers come: those answers must run.
  cfg.lane_linger_ms = 600000;
  handler_factory make = [&c](const handler_params&) {
    return std::make_unique<leaves_request_open>(&c);
  };
  auto rt = rt_type::start(cfg, make);
  REQUIRE(rt);
  c.echo = (*rt)->system().spawn<slow_echo>(std::chrono::milliseconds{20},
                                            &c.sent);
  constexpr int n = 40;
  for (int i = 0; i < n; ++i) {
    REQUIRE((*rt)->submit(key{uint64_t(i)}, int{i}));
    std::unique_ptr<rt_type::event_type> out;
    REQUIRE((*rt)->pull(out, 10s));
    CHECK(out->status == outcome::ok);
  }
  // Every answer was sent, and the two lanes still alive ran theirs. A
  // shard handles one sender's messages in the order they were sent, so
  // by the time those ran, the earlier answers to their shards (to retired
  // lanes) were handled too: dropped, or run against a retired handler.
  auto wait = [](auto done) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    return done();
  };
  CHECK(wait([&] { return c.sent.load() == n; }));
  CHECK(wait([&] { return c.answers.load() >= 2; }));
  auto st = (*rt)->stats();
  auto answers = c.answers.load();
  auto after_retire = c.answers_after_retire.load();
  INFO("answers run: " << answers << ", lanes alive: " << st.active_lanes);
  CHECK(st.active_lanes == 2);
  // Answers reach live handlers (a slow machine may let a few more lanes
  // live long enough), and none ran after its handler retired.
  CHECK(answers >= 2);
  CHECK(after_retire == 0);
  CHECK(st.lanes_spawned == n);
  caf::anon_send_exit(c.echo, caf::exit_reason::user_shutdown);
  c.echo = nullptr;
  (*rt)->stop();
  CHECK(c.live == 0);
}

TEST_CASE("every activation of a key gets a fresh handler and only its own "
          "events, whichever shard hosts it",
          "[lane][shard]") {
  std::atomic<int> live{0};
  struct fresh : handler<int, int> {
    explicit fresh(std::atomic<int>* l) : live_(l) { ++*live_; }
    ~fresh() override { --*live_; }
    void on_activate(const key& k) override { k_ = k; }
    void on_event(int& x, completion<int> done) override {
      // The key's events carry the key's own number.
      done.ok(current_key() == k_ && key{uint64_t(x % 1000)} == k_ ? ++n_ : -1);
    }
    std::atomic<int>* live_;
    key k_;
    int n_ = 0;
  };
  settings cfg;
  cfg.max_attempts = 1; // the default before 0.2.0
  cfg.threads = 2;
  cfg.max_active_keys = 4;
  cfg.order = order_mode::per_key;
  handler_factory make = [&live](const handler_params&) {
    return std::make_unique<fresh>(&live);
  };
  auto rt = rt_type::start(cfg, make);
  REQUIRE(rt);
  constexpr int keys = 50, rounds = 6;
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < keys; ++k)
      REQUIRE((*rt)->submit(key{uint64_t(k)}, int{r * 1000 + k}));
  std::map<int, int> last; // key -> last count seen
  for (int i = 0; i < keys * rounds; ++i) {
    std::unique_ptr<rt_type::event_type> out;
    REQUIRE((*rt)->pull(out, 10s));
    REQUIRE(out->status == outcome::ok);
    REQUIRE(out->result);
    auto k = out->payload % 1000;
    CHECK(*out->result >= 1);
    // A count restarts at 1 when the key got a new handler; it never
    // continues another key's count.
    CHECK((*out->result == 1 || *out->result == last[k] + 1));
    last[k] = *out->result;
  }
  CHECK((*rt)->stats().peak_active_lanes <= 4);
  (*rt)->stop();
  CHECK(live == 0);
}

TEST_CASE("a lane that ran dry lingers for its key's next event, and gives "
          "its slot up at once when another key needs it",
          "[lane][linger]") {
  std::atomic<int> live{0};
  struct counting : handler<int, int> {
    explicit counting(std::atomic<int>* l) : live_(l) { ++*live_; }
    ~counting() override { --*live_; }
    void on_event(int&, completion<int> done) override { done.ok(++n_); }
    std::atomic<int>* live_;
    int n_ = 0; // survives between events only while the lane lingers
  };
  settings cfg;
  cfg.order = order_mode::global; // the default before 0.2.0
  cfg.max_attempts = 1; // the default before 0.2.0
  cfg.threads = 2;
  cfg.max_active_keys = 1;
  cfg.lane_linger_ms = 60000; // far longer than the test: never the timer
  handler_factory make = [&live](const handler_params&) {
    return std::make_unique<counting>(&live);
  };
  auto rt = rt_type::start(cfg, make);
  REQUIRE(rt);
  auto one = [&](uint64_t k) {
    REQUIRE((*rt)->submit(key{k}, 0));
    std::unique_ptr<rt_type::event_type> out;
    REQUIRE((*rt)->pull(out, 10s)); // well below the linger: no timer help
    REQUIRE(out->result);
    return *out->result;
  };
  // Key 1's events, each after the previous came out: one lane, one
  // handler, its count going on.
  for (int i = 1; i <= 5; ++i)
    CHECK(one(1) == i);
  CHECK((*rt)->stats().lanes_spawned == 1);
  // Key 2 needs the only slot: key 1's lingering lane retires for it.
  CHECK(one(2) == 1);
  // And key 1 comes back with a fresh handler.
  CHECK(one(1) == 1);
  CHECK((*rt)->stats().lanes_spawned == 3);
  CHECK((*rt)->stats().peak_active_lanes == 1);
  (*rt)->stop();
  CHECK(live == 0);
}

TEST_CASE("a replayed key gets the slot a lingering lane holds at once",
          "[lane][linger][replay]") {
  std::atomic<bool> fixed{false};
  struct refusing : handler<int, int> {
    explicit refusing(std::atomic<bool>* f) : fixed_(f) {}
    void on_event(int& x, completion<int> done) override {
      if (x < 0 && !*fixed_)
        done.fail_permanently("refused");
      else
        done.ok(x);
    }
    std::atomic<bool>* fixed_;
  };
  settings cfg;
  cfg.order = order_mode::global; // the default before 0.2.0
  cfg.max_attempts = 1; // the default before 0.2.0
  cfg.threads = 2;
  cfg.max_active_keys = 1;
  cfg.lane_linger_ms = 60000;
  handler_factory make = [&fixed](const handler_params&) {
    return std::make_unique<refusing>(&fixed);
  };
  auto rt = rt_type::start(cfg, make);
  REQUIRE(rt);
  auto next = [&] {
    std::unique_ptr<rt_type::event_type> out;
    REQUIRE((*rt)->pull(out, 10s)); // well below the linger
    return out;
  };
  REQUIRE((*rt)->submit(key{"A"}, -1));
  CHECK(next()->status == outcome::parked);
  REQUIRE((*rt)->submit(key{"B"}, 2)); // B's lane lingers in the only slot
  CHECK(next()->status == outcome::ok);
  fixed = true;
  auto n = (*rt)->replay(key{"A"});
  REQUIRE(n);
  CHECK(*n == 1);
  auto out = next();
  CHECK(out->status == outcome::ok);
  CHECK(out->payload == -1);
  (*rt)->stop();
}

TEST_CASE("thousands of lingering lanes keep their keys while the backlog "
          "purges the slots of keys that left",
          "[lane][linger][backlog]") {
  // Enough keys that every stripe of the backlog passes its purge
  // threshold while the lanes of the keys already seen linger: a purge
  // must leave a lingering lane's slot (and so its route) alone.
  constexpr int keys = 8192;
  struct counting : handler<int, int> {
    void on_event(int&, completion<int> done) override { done.ok(++n_); }
    int n_ = 0; // survives between events only while the lane lingers
  };
  settings cfg;
  cfg.order = order_mode::global; // the default before 0.2.0
  cfg.max_attempts = 1; // the default before 0.2.0
  cfg.threads = 2;
  cfg.max_active_keys = 2 * keys;
  cfg.lane_linger_ms = 60000; // far longer than the test
  handler_factory make = [](const handler_params&) {
    return std::make_unique<counting>();
  };
  auto rt = rt_type::start(cfg, make);
  REQUIRE(rt);
  auto pass = [&](int want) {
    for (int k = 0; k < keys; ++k)
      REQUIRE((*rt)->submit(key{"k" + std::to_string(k)}, 0));
    int right = 0;
    for (int i = 0; i < keys; ++i) {
      std::unique_ptr<rt_type::event_type> out;
      REQUIRE((*rt)->pull(out, 10s));
      REQUIRE(out->result);
      right += *out->result == want;
    }
    return right;
  };
  CHECK(pass(1) == keys);
  // Each key's second event finds its first lane and that lane's handler.
  CHECK(pass(2) == keys);
  CHECK((*rt)->stats().lanes_spawned == keys);
  (*rt)->stop();
}
