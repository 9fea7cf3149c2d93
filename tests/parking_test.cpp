// Parking under random failure injection: random keyed workloads from
// several producer threads, each event with a fault plan (success, skip,
// transient failures that heal after k attempts, permanent failures,
// exceptions, dropped completions, timeouts with late completions), checked
// against a model of what the runtime must do: per-key order of attempts
// and outputs, exactly-once accounting, exact attempt counts, the parked
// suffix of each key, backoff bounds, replay, discard, durability across a
// restart and `park = none`.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <keylane/runtime.hpp>

#include "fault_support.hpp"

using namespace keylane;
using namespace keylane::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using rt_type = runtime<item, uint64_t>;
using ev_type = rt_type::event_type;
using clk = std::chrono::steady_clock;

// Every wait is bounded: a hang fails the test instead of blocking CI.
constexpr auto wait_limit = std::chrono::seconds(90);

// -- problems -----------------------------------------------------------------

// Collects mismatches so one CHECK reports the first few of thousands.
struct problems {
  std::vector<std::string> list;
  size_t total = 0;
  template <class... Ts>
  void add(const Ts&... xs) {
    ++total;
    if (list.size() < 25) {
      std::ostringstream out;
      (out << ... << xs);
      list.push_back(out.str());
    }
  }
  [[nodiscard]] std::string render() const {
    std::string out = std::to_string(total) + " problem(s)";
    for (auto& x : list)
      out += "\n  " + x;
    return out;
  }
};

#define CHECK_NO_PROBLEMS(p)                                                   \
  do {                                                                         \
    INFO((p).render());                                                        \
    CHECK((p).total == 0);                                                     \
  } while (false)

// -- what came out ------------------------------------------------------------

struct output {
  uint64_t seq = 0;
  uint64_t id = 0;
  uint32_t key_id = 0;
  outcome status = outcome::pending;
  std::optional<uint64_t> result;
  std::string error;
  uint32_t attempts = 0;
};

// Every output in emission order.
class output_log {
public:
  void take(const ev_type& e) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      all_.push_back(output{e.seq, e.payload.id, e.payload.key_id, e.status,
                            e.result, e.error, e.attempts});
    }
    cv_.notify_all();
  }

  [[nodiscard]] bool wait_for(size_t n, std::chrono::nanoseconds limit) {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, limit, [&] { return all_.size() >= n; });
  }

  [[nodiscard]] size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return all_.size();
  }

  [[nodiscard]] std::vector<output> snapshot() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return all_;
  }

private:
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<output> all_;
};

// -- the model ----------------------------------------------------------------

// What the runtime must do with one event in one run.
struct expectation {
  outcome status = outcome::pending;
  // Handler attempts (0: it never reached the handler).
  uint32_t attempts = 0;
  // The attempt whose failure ended it (0: it did not fail).
  uint32_t final_attempt = 0;
  // Parked behind an earlier parked event of its key.
  bool behind = false;
};

// One run of the runtime between two drains.
struct phase {
  explicit phase(size_t keys) : order(keys) {}
  std::map<uint64_t, expectation> expect;    // by payload id
  std::vector<std::vector<uint64_t>> order;  // per key: ids in lane order
  std::set<uint64_t> replayed;               // ids resubmitted by replay
  size_t log_begin = 0;                      // first output of the run
};

// The keys' parked lists, as the runtime must keep them.
class model {
public:
  model(const fault_table& t, size_t keys, const settings& cfg)
    : table_(t), parked_(keys), lists_(keys),
      max_attempts_(static_cast<uint32_t>(cfg.max_attempts)),
      mode_(cfg.park) {}

  // `ids` of key `k` reach its lane in this order in `ph`.
  void run(uint32_t k, const std::vector<uint64_t>& ids, phase& ph) {
    for (auto id : ids) {
      ph.order[k].push_back(id);
      expectation e;
      if (parked_[k]) {
        e.status = outcome::parked;
        e.behind = true;
        lists_[k].push_back(id);
        ph.expect[id] = e;
        continue;
      }
      auto p = table_.get(id);
      bool fails = false;
      if (p.failures >= max_attempts_) {
        e.attempts = max_attempts_;
        fails = true;
      } else {
        e.attempts = p.failures + 1;
        if (p.then == plan::end::permanent)
          fails = true;
        else
          e.status = p.then == plan::end::skip ? outcome::skipped
                                               : outcome::ok;
      }
      if (fails) {
        e.final_attempt = e.attempts;
        if (mode_ == park_mode::none) {
          e.status = outcome::failed;
        } else {
          e.status = outcome::parked;
          parked_[k] = true;
          lists_[k].push_back(id);
        }
      }
      ph.expect[id] = e;
    }
  }

  // Un-parks `k` and hands back its parked ids (for replay or discard).
  std::vector<uint64_t> take_parked(uint32_t k) {
    parked_[k] = false;
    return std::exchange(lists_[k], {});
  }

  [[nodiscard]] const std::vector<uint64_t>& parked(uint32_t k) const {
    return lists_[k];
  }

  [[nodiscard]] std::vector<uint32_t> parked_keys() const {
    std::vector<uint32_t> out;
    for (uint32_t k = 0; k < lists_.size(); ++k)
      if (!lists_[k].empty())
        out.push_back(k);
    return out;
  }

  [[nodiscard]] size_t keys() const noexcept { return lists_.size(); }

private:
  const fault_table& table_;
  std::vector<bool> parked_;
  std::vector<std::vector<uint64_t>> lists_;
  uint32_t max_attempts_;
  park_mode mode_;
};

// Why the reason `r` does not fit event `id` (empty if it does).
std::string reason_problem(const plan& p, uint64_t id, const expectation& e,
                           uint32_t max_attempts, const std::string& r) {
  auto contains = [&r](const std::string& x) {
    return r.find(x) != std::string::npos;
  };
  if (e.behind)
    return r == parked_behind_reason
             ? ""
             : std::string{"expected \""} + parked_behind_reason + "\"";
  if (e.final_attempt == 0)
    return "";
  if (p.failures < max_attempts)
    return r == injected_permanent(id) ? ""
                                       : "expected " + injected_permanent(id);
  auto a = max_attempts;
  switch (p.how) {
    case fail_how::fail:
    case fail_how::fail_later:
      return r == injected_failure(id, a) ? ""
                                          : "expected " + injected_failure(id, a);
    case fail_how::raise:
      return contains(injected_exception(id, a))
               ? ""
               : "expected it to name " + injected_exception(id, a);
    case fail_how::drop:
      return contains("dropped completion") ? ""
                                            : "expected a dropped completion";
    case fail_how::hang_thread:
    case fail_how::hang_timer:
      return contains("timed out") ? "" : "expected a timeout";
  }
  return "";
}

// -- backoff ------------------------------------------------------------------

// min(max_backoff, initial * multiplier^(failed - 1)), computed here rather
// than taken from the runtime.
std::chrono::duration<double, std::milli> backoff_cap(const settings& s,
                                                      uint32_t failed) {
  double ms = static_cast<double>(s.initial_backoff_ms);
  for (uint32_t i = 1; i < failed; ++i) {
    ms *= s.backoff_multiplier;
    if (ms >= static_cast<double>(s.max_backoff_ms))
      break;
  }
  return std::chrono::duration<double, std::milli>(
    std::min(ms, static_cast<double>(s.max_backoff_ms)));
}

// The time from a failed attempt to the next attempt of the same event.
struct backoff_gap {
  uint64_t id;
  uint32_t failed;  // failed attempts so far
  std::chrono::duration<double, std::milli> gap;
  std::chrono::duration<double, std::milli> cap;
};

// -- state shared by the runtimes of one scenario ----------------------------

struct scenario {
  scenario(settings s, size_t keys, size_t capacity, uint64_t seed)
    : cfg(std::move(s)), keys(keys), table(capacity),
      m(table, keys, cfg), submit_seq(capacity, ~uint64_t{0}), rng(seed) {}
  settings cfg;
  size_t keys;
  fault_table table;
  model m;
  // The seq `submit` returned for each id (written by producer threads for
  // distinct ids, read after they joined).
  std::vector<uint64_t> submit_seq;
  // The parked tombstones of each id, oldest first, over every runtime of
  // the scenario: the park store must describe the event as one of them.
  std::map<uint64_t, std::vector<output>> parked_history;
  std::mt19937_64 rng;
  bool string_keys = false;

  [[nodiscard]] key key_of(uint32_t k) const {
    return string_keys ? key{"acct-" + std::to_string(k)} : key{uint64_t{k}};
  }

  // `n` new items with plans drawn from `mix`, spread over `producers`
  // lists, on the keys `pick` chooses.
  template <class Pick>
  std::vector<std::vector<item>> make_items(size_t n, size_t producers,
                                            const fault_mix& mix, Pick pick) {
    std::vector<std::vector<item>> out(producers);
    for (size_t i = 0; i < n; ++i) {
      auto k = static_cast<uint32_t>(pick(rng));
      auto prod = static_cast<uint32_t>(rng() % producers);
      auto id = table.add(
        random_plan(rng, mix, static_cast<uint32_t>(cfg.max_attempts)));
      out[prod].emplace_back(id, k, prod);
    }
    return out;
  }
};

// -- one runtime --------------------------------------------------------------

class harness {
public:
  harness(scenario& s, bool pull) : sc(s), jr(s.keys) {
    handler_factory make = [this](const handler_params&) {
      return std::make_unique<fault_handler>(&sc.table, &jr, &late,
                                             sc.cfg.attempt_timeout_ms);
    };
    rt_type::callback cb;
    if (!pull)
      cb = [this](ev_type& e) { note(e); };
    auto started = rt_type::start(sc.cfg, make, cb);
    if (!started)
      FAIL("start failed: " << render(started.error()));
    rt = std::move(*started);
    pull_ = pull;
    if (pull) {
      pulling_ = true;
      puller_ = std::thread{[this] {
        while (pulling_) {
          std::unique_ptr<ev_type> e;
          if (rt->pull(e, 20ms))
            note(*e);
        }
      }};
    }
  }

  ~harness() { shutdown(); }

  // Stops the runtime; checks the stop report when `check` is set.
  void shutdown(bool check = false) {
    if (!rt)
      return;
    if (puller_.joinable()) {
      pulling_ = false;
      puller_.join();
    }
    auto report = rt->stop();
    late.shutdown(); // while the actor system still exists
    rt.reset();
    if (check) {
      CHECK(report.unfinished.empty());
      CHECK(report.delivered == log.size());
    }
  }

  // Submits `lists[p]` from producer thread p, each list in order.
  void submit(const std::vector<std::vector<item>>& lists) {
    std::atomic<uint64_t> rejected{0};
    std::vector<std::thread> producers;
    for (auto& list : lists)
      producers.emplace_back([&] {
        for (auto& x : list) {
          auto res = rt->submit(sc.key_of(x.key_id), x);
          if (!res) {
            ++rejected;
            continue;
          }
          sc.submit_seq.at(x.id) = res.seq();
        }
      });
    for (auto& t : producers)
      t.join();
    REQUIRE(rejected == 0);
    add_submitted(lists);
  }

  // Waits until `expected` outputs came out in total.
  void drain(size_t expected) {
    auto drained = rt->drain(wait_limit);
    auto at_drain = log.size();
    CHECK(drained);
    // With a callback, delivery is the callback's return: drain must not
    // return before every output was seen.
    if (!pull_)
      CHECK(at_drain == expected);
    REQUIRE(log.wait_for(expected, wait_limit));
  }

  // Counts events submitted outside `submit` (by replay_phase's threads).
  void add_submitted(const std::vector<std::vector<item>>& lists) {
    for (auto& list : lists)
      submitted_ += list.size();
  }

  [[nodiscard]] size_t submitted() const noexcept { return submitted_; }

  scenario& sc;
  journal jr;
  completer late;
  output_log log;
  std::unique_ptr<rt_type> rt;
  uint64_t replayed = 0;

private:
  void note(const ev_type& e) {
    log.take(e);
    sc.table.note_output(e.payload.id);
    late.poke();
  }

  bool pull_ = false;
  std::atomic<bool> pulling_{false};
  std::thread puller_;
  size_t submitted_ = 0;
};

// Lane order for a batch of new items: by the seq `submit` returned.
std::vector<std::vector<uint64_t>>
by_key_in_seq_order(const scenario& sc,
                    const std::vector<std::vector<item>>& lists) {
  std::vector<std::vector<uint64_t>> out(sc.keys);
  for (auto& list : lists)
    for (auto& x : list)
      out[x.key_id].push_back(x.id);
  for (auto& v : out)
    std::sort(v.begin(), v.end(), [&sc](uint64_t a, uint64_t b) {
      return sc.submit_seq.at(a) < sc.submit_seq.at(b);
    });
  return out;
}

// -- the checks ---------------------------------------------------------------

// Checks one run against the model: outputs, lane order, attempts, backoff
// lower bounds, the park store and the stats. Returns the backoff gaps seen.
std::vector<backoff_gap> check_phase(harness& h, const phase& ph) {
  auto& sc = h.sc;
  const auto& cfg = sc.cfg;
  auto max_attempts = static_cast<uint32_t>(cfg.max_attempts);
  auto log = h.log.snapshot();
  problems outs, reasons, order, attempts, parking;

  // Exactly once, as the model says.
  std::map<uint64_t, size_t> seen;
  std::set<uint64_t> seqs_out; // every seq this runtime put out
  for (size_t i = 0; i < ph.log_begin && i < log.size(); ++i)
    seqs_out.insert(log[i].seq);
  for (size_t i = ph.log_begin; i < log.size(); ++i) {
    auto& o = log[i];
    auto it = ph.expect.find(o.id);
    if (it == ph.expect.end()) {
      outs.add("id ", o.id, " (seq ", o.seq, ") came out but was not sent");
      continue;
    }
    if (++seen[o.id] > 1) {
      outs.add("id ", o.id, " came out ", seen[o.id], " times");
      continue;
    }
    auto& e = it->second;
    auto p = sc.table.get(o.id);
    if (o.status != e.status)
      outs.add("id ", o.id, " key ", o.key_id, ": ", to_string(o.status),
               " (error \"", o.error, "\", attempts ", o.attempts,
               "), expected ", to_string(e.status));
    if (o.attempts != e.attempts)
      attempts.add("id ", o.id, " key ", o.key_id, ": ", o.attempts,
                   " attempts, expected ", e.attempts, " (", to_string(o.status),
                   ", plan failures ", p.failures, ")");
    if (o.result && *o.result == stale_result(o.id))
      outs.add("id ", o.id, ": a late completion's result came out");
    else if (o.status == outcome::ok
             && (!o.result || *o.result != o.id * 7 + o.key_id))
      outs.add("id ", o.id, ": wrong or missing result");
    else if (o.status != outcome::ok && o.result)
      outs.add("id ", o.id, ": ", to_string(o.status), " with a result ",
               *o.result);
    if (o.status == e.status
        && (o.status == outcome::parked || o.status == outcome::failed)) {
      auto why = reason_problem(p, o.id, e, max_attempts, o.error);
      if (!why.empty())
        reasons.add("id ", o.id, ": reason \"", o.error, "\": ", why);
    }
    // A replayed event runs under a new seq; every seq comes out once.
    if (ph.replayed.count(o.id) == 0 && o.seq != sc.submit_seq.at(o.id))
      outs.add("id ", o.id, ": seq ", o.seq, ", submit returned ",
               sc.submit_seq.at(o.id));
    if (!seqs_out.insert(o.seq).second)
      outs.add("seq ", o.seq, " came out twice (the second time id ", o.id,
               ")");
    if (o.status == outcome::parked)
      sc.parked_history[o.id].push_back(o);
  }
  for (auto& [id, e] : ph.expect)
    if (seen.count(id) == 0)
      outs.add("id ", id, " never came out (expected ", to_string(e.status),
               ")");
  CHECK(log.size() - ph.log_begin == ph.expect.size());

  // Output order: per key always, globally in seq order.
  if (cfg.order != order_mode::none) {
    std::vector<std::vector<uint64_t>> ids(sc.keys);
    std::vector<std::vector<uint64_t>> seqs(sc.keys);
    for (size_t i = ph.log_begin; i < log.size(); ++i) {
      ids[log[i].key_id].push_back(log[i].id);
      seqs[log[i].key_id].push_back(log[i].seq);
    }
    for (uint32_t k = 0; k < sc.keys; ++k) {
      if (ids[k] != ph.order[k])
        order.add("key ", k, ": outputs in another order than submitted");
      if (!std::is_sorted(seqs[k].begin(), seqs[k].end()))
        order.add("key ", k, ": output seqs not rising");
    }
  }
  if (cfg.order == order_mode::global)
    for (size_t i = 0; i < log.size(); ++i)
      if (log[i].seq != i) {
        order.add("global order: output #", i, " has seq ", log[i].seq);
        break;
      }

  // Handler attempts: per key exactly the planned attempts of the events
  // that were not parked behind, in lane order, one at a time.
  std::vector<backoff_gap> gaps;
  for (uint32_t k = 0; k < sc.keys; ++k) {
    std::vector<std::pair<uint64_t, uint32_t>> want;
    for (auto id : ph.order[k]) {
      auto& e = ph.expect.at(id);
      for (uint32_t a = 1; a <= e.attempts; ++a)
        want.emplace_back(id, a);
    }
    auto recs = h.jr.of(k);
    std::vector<std::pair<uint64_t, uint32_t>> got;
    for (auto& r : recs)
      got.emplace_back(r.id, r.attempt);
    if (got != want) {
      size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i])
        ++i;
      std::ostringstream at;
      if (i < got.size())
        at << "ran id " << got[i].first << " attempt " << got[i].second;
      else
        at << "ran nothing";
      if (i < want.size())
        at << ", expected id " << want[i].first << " attempt "
           << want[i].second;
      else
        at << ", expected nothing more";
      attempts.add("key ", k, ": handler attempt #", i, " ", at.str());
    }
    for (size_t i = 0; i + 1 < recs.size(); ++i) {
      auto& r = recs[i];
      auto& next = recs[i + 1];
      if (next.id != r.id || !r.failed)
        continue;
      backoff_gap g{r.id, r.attempt,
                    std::chrono::duration<double, std::milli>(next.start
                                                              - r.failed_at),
                    backoff_cap(cfg, r.attempt)};
      gaps.push_back(g);
      // Lower bounds only: a timer never fires early. A hang's failed_at
      // is the earliest moment of its timeout.
      auto floor = cfg.jitter == jitter_mode::none
                     ? g.cap
                     : std::chrono::duration<double, std::milli>(0);
      if (g.gap < floor)
        attempts.add("id ", r.id, ": attempt ", r.attempt + 1, " started ",
                     g.gap.count(), " ms after attempt ", r.attempt,
                     " failed, below ", floor.count(), " ms");
    }
  }
  CHECK(h.jr.overlaps == 0);

  // The park store holds exactly the model's parked lists, in order, each
  // record as its latest tombstone described it.
  auto keys = h.rt->parked_keys();
  REQUIRE(keys);
  std::map<uint32_t, parked_key> summary;
  for (size_t i = 1; i < keys->size(); ++i)
    if ((*keys)[i].parked_at < (*keys)[i - 1].parked_at)
      parking.add("parked_keys not ordered by first parked time at #", i);
  for (auto& pk : *keys) {
    uint32_t k = 0;
    bool found = false;
    for (uint32_t j = 0; j < sc.keys; ++j)
      if (sc.key_of(j) == pk.k) {
        k = j;
        found = true;
      }
    if (!found || !summary.emplace(k, pk).second)
      parking.add("parked_keys lists ", pk.k, found ? " twice" : " (unknown)");
  }
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto& want = sc.m.parked(k);
    auto evs = h.rt->parked_events(sc.key_of(k));
    if (!evs) {
      parking.add("parked_events(", k, ") failed: ", render(evs.error()));
      continue;
    }
    std::vector<uint64_t> got;
    for (auto& pe : *evs)
      got.push_back(pe.payload.id);
    if (got != want) {
      std::ostringstream g, w;
      for (auto x : got)
        g << x << ' ';
      for (auto x : want)
        w << x << ' ';
      parking.add("key ", k, ": parked ids [", g.str(), "], expected [",
                  w.str(), "]");
      continue;
    }
    for (size_t i = 0; i < evs->size(); ++i) {
      auto& pe = (*evs)[i];
      if (pe.k != sc.key_of(k) || pe.payload.key_id != k)
        parking.add("key ", k, ": record of id ", pe.payload.id,
                    " has the wrong key");
      if (i > 0 && !((*evs)[i - 1].id < pe.id))
        parking.add("key ", k, ": store ids not rising");
      if (i > 0 && pe.parked_at < (*evs)[i - 1].parked_at)
        parking.add("key ", k, ": parked_at not rising");
      auto hist = sc.parked_history.find(pe.payload.id);
      if (hist == sc.parked_history.end()) {
        parking.add("id ", pe.payload.id, " is parked without a tombstone");
        continue;
      }
      // The record describes one of the times the event was parked (its
      // seq is that of the run that parked it). When it was last parked for
      // a failure of its own (it ran again in a replay and failed for good
      // again), reason and attempts are that failure's: "the last failure".
      auto& ts = hist->second;
      auto& last = ts.back();
      auto same = [&pe](const output& t) {
        return pe.seq == t.seq && pe.reason == t.error
               && pe.attempts == t.attempts;
      };
      auto why_same = [&pe](const output& t) {
        return pe.reason == t.error && pe.attempts == t.attempts;
      };
      bool fits = std::any_of(ts.begin(), ts.end(), same);
      if (last.attempts > 0)
        fits = why_same(last)
               && std::any_of(ts.begin(), ts.end(), [&pe](const output& t) {
                    return t.seq == pe.seq;
                  });
      if (!fits)
        parking.add("id ", pe.payload.id, ": record (seq ", pe.seq,
                    ", reason \"", pe.reason, "\", attempts ", pe.attempts,
                    ") fits none of its ", ts.size(),
                    " tombstone(s); the last: seq ", last.seq, ", \"",
                    last.error, "\", ", last.attempts, " attempts");
    }
    auto s = summary.find(k);
    if (want.empty()) {
      if (s != summary.end())
        parking.add("key ", k, " is in parked_keys with nothing parked");
      continue;
    }
    if (s == summary.end()) {
      parking.add("key ", k, " has ", want.size(),
                  " parked events but is not in parked_keys");
      continue;
    }
    if (s->second.count != want.size())
      parking.add("key ", k, ": parked_keys count ", s->second.count,
                  ", expected ", want.size());
    if (s->second.first_reason != evs->front().reason)
      parking.add("key ", k, ": first_reason \"", s->second.first_reason,
                  "\", first record \"", evs->front().reason, "\"");
    if (s->second.parked_at != evs->front().parked_at)
      parking.add("key ", k, ": parked_at differs from its first record");
  }

  // Stats over the whole life of this runtime.
  auto st = h.rt->stats();
  uint64_t ok = 0, skipped = 0, failed = 0, parked = 0, retries = 0;
  for (auto& o : log) {
    ok += o.status == outcome::ok;
    skipped += o.status == outcome::skipped;
    failed += o.status == outcome::failed;
    parked += o.status == outcome::parked;
    retries += o.attempts > 1 ? o.attempts - 1 : 0;
  }
  CHECK(st.delivered == log.size());
  CHECK(st.ok == ok);
  CHECK(st.skipped == skipped);
  CHECK(st.failed == failed);
  CHECK(st.parked == parked);
  CHECK(st.retries == retries);
  CHECK(st.replayed == h.replayed);
  // A replayed event is accepted again, under a new seq, and delivered
  // again: `accepted` counts it, so accepted == delivered after a drain.
  CHECK(st.accepted == h.submitted() + h.replayed);

  CHECK_NO_PROBLEMS(outs);
  CHECK_NO_PROBLEMS(reasons);
  CHECK_NO_PROBLEMS(order);
  CHECK_NO_PROBLEMS(attempts);
  CHECK_NO_PROBLEMS(parking);
  h.jr.clear();
  return gaps;
}

// Submits `lists`, drains, checks; the model learns the run. Returns the
// backoff gaps.
std::vector<backoff_gap> run_phase(harness& h,
                                   const std::vector<std::vector<item>>& lists) {
  auto& sc = h.sc;
  phase ph{sc.keys};
  ph.log_begin = h.log.size();
  size_t n = 0;
  for (auto& l : lists)
    n += l.size();
  h.submit(lists);
  h.drain(ph.log_begin + n);
  auto order = by_key_in_seq_order(sc, lists);
  for (uint32_t k = 0; k < sc.keys; ++k)
    sc.m.run(k, order[k], ph);
  return check_phase(h, ph);
}

settings fault_settings(order_mode order) {
  settings s;
  s.threads = 2;
  s.order = order;
  s.max_attempts = 3;
  s.initial_backoff_ms = 1;
  s.backoff_multiplier = 2.0;
  s.max_backoff_ms = 4;
  // Long enough that no planned success (< 1 ms) times out on a loaded
  // machine; only the planned hangs do.
  s.attempt_timeout_ms = 150;
  return s;
}

// Keys drawn uniformly, with key 0 taking a quarter of the traffic.
auto some_hot_key(size_t keys) {
  return [keys](std::mt19937_64& rng) {
    return rng() % 4 == 0 ? 0 : rng() % keys;
  };
}

// Heals a random share of the faulty events of `ids`.
void heal_some(scenario& sc, const std::vector<uint64_t>& ids, int pct) {
  for (auto id : ids)
    if (sc.table.faulty(id) && static_cast<int>(sc.rng() % 100) < pct)
      sc.table.heal(id);
}

// Replays a share of the parked keys, each from one of several threads that
// submits the key's newer events right after its replay call, while the
// same threads send new events for the other keys. Before that, heals
// `heal_pct` percent of the faulty parked events of the replayed keys,
// except for the first replayed key when `refail_first` is set: its first
// parked event fails for good again. Returns how many keys were replayed.
size_t replay_phase(harness& h, int replay_pct, int heal_pct,
                    const fault_mix& mix, size_t threads,
                    bool refail_first = false) {
  auto& sc = h.sc;
  phase ph{sc.keys};
  ph.log_begin = h.log.size();
  std::vector<bool> replaying(sc.keys, false);
  std::vector<std::vector<uint64_t>> old(sc.keys);
  size_t replayed_keys = 0;
  for (auto k : sc.m.parked_keys()) {
    if (static_cast<int>(sc.rng() % 100) < replay_pct) {
      if (!(refail_first && replayed_keys == 0))
        heal_some(sc, sc.m.parked(k), heal_pct);
      ++replayed_keys;
      replaying[k] = true;
      old[k] = sc.m.take_parked(k);
      for (auto id : old[k]) {
        sc.table.rearm(id);
        ph.replayed.insert(id);
      }
    }
  }
  // Newer events: every replayed key gets some, other keys maybe.
  std::vector<std::vector<item>> newer(sc.keys);
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto n = replaying[k] ? 1 + sc.rng() % 3 : sc.rng() % 3;
    auto made = sc.make_items(n, 1, mix, [k](auto&) { return k; });
    newer[k] = std::move(made[0]);
  }
  std::vector<caf::expected<uint64_t>> returned(sc.keys, uint64_t{0});
  std::atomic<uint64_t> rejected{0};
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (uint32_t k = static_cast<uint32_t>(t); k < sc.keys;
           k += static_cast<uint32_t>(threads)) {
        if (replaying[k])
          returned[k] = h.rt->replay(sc.key_of(k));
        for (auto& x : newer[k]) {
          auto res = h.rt->submit(sc.key_of(k), x);
          if (!res) {
            ++rejected;
            continue;
          }
          sc.submit_seq.at(x.id) = res.seq();
        }
      }
    });
  for (auto& w : workers)
    w.join();
  REQUIRE(rejected == 0);
  size_t expected = ph.log_begin;
  problems replays;
  for (uint32_t k = 0; k < sc.keys; ++k) {
    expected += newer[k].size();
    if (!replaying[k])
      continue;
    if (!returned[k]) {
      replays.add("replay(", k, ") failed: ", render(returned[k].error()));
      continue;
    }
    if (*returned[k] != old[k].size())
      replays.add("replay(", k, ") returned ", *returned[k], ", ",
                  old[k].size(), " were parked");
    h.replayed += *returned[k];
    expected += old[k].size();
  }
  CHECK_NO_PROBLEMS(replays);
  std::vector<std::vector<item>> lists;
  for (auto& v : newer)
    lists.push_back(v);
  // The threads above submitted these: count them for the stats check.
  h.add_submitted(lists);
  h.drain(expected);
  auto order = by_key_in_seq_order(sc, lists);
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto ids = old[k];
    ids.insert(ids.end(), order[k].begin(), order[k].end());
    sc.m.run(k, ids, ph);
  }
  check_phase(h, ph);
  return replayed_keys;
}

} // namespace

namespace {

fault_mix healthy_mix() {
  fault_mix m;
  m.transient = 0;
  m.exhausting = 0;
  m.permanent = 0;
  m.hangs = false;
  return m;
}

void heal_all(scenario& sc) {
  for (uint64_t id = 0; id < sc.table.size(); ++id)
    sc.table.heal(id);
}

std::string describe(const settings& s, bool pull) {
  return std::string{"order="} + to_string(s.order) + " window="
         + (s.window == unbounded ? std::string{"unbounded"}
                                  : std::to_string(s.window))
         + " max_active_keys=" + std::to_string(s.max_active_keys)
         + " jitter=" + to_string(s.jitter) + " park=" + to_string(s.park)
         + (pull ? " pull" : " callback");
}

struct variant {
  order_mode order;
  size_t window;
  size_t cap;
  jitter_mode jitter;
  bool pull;
  // In global order a hang holds up the sink for its timeout; with a small
  // window the producers wait for it too, so fewer hangs keep runs short.
  int hang_share = 10;
};

settings variant_settings(const variant& v) {
  auto s = fault_settings(v.order);
  s.window = v.window;
  s.max_active_keys = v.cap;
  s.jitter = v.jitter;
  return s;
}

const variant property_variants[] = {
  {order_mode::per_key, unbounded, 1024, jitter_mode::none, false},
  {order_mode::global, 32, 16, jitter_mode::full, false, 4},
  {order_mode::global, unbounded, 1024, jitter_mode::none, true},
  {order_mode::none, unbounded, 8, jitter_mode::full, true},
};

void run_property(uint64_t base_seed, size_t events, size_t keys) {
  auto live_before = item::live.load();
  uint64_t i = 0;
  for (auto& v : property_variants) {
    auto seed = base_seed + i++;
    auto cfg = variant_settings(v);
    INFO("seed " << seed << " = KEYLANE_SEED " << base_seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << base_seed << "), "
                 << describe(cfg, v.pull));
    scenario sc{cfg, keys, events + 16, seed};
    harness h{sc, v.pull};
    fault_mix mix;
    mix.hang_share = v.hang_share;
    run_phase(h, sc.make_items(events, 3, mix, some_hot_key(keys)));
    CHECK_FALSE(sc.m.parked_keys().empty()); // the run did park something
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

void run_replay_property(uint64_t base_seed, size_t events, size_t keys) {
  auto live_before = item::live.load();
  const variant variants[] = {
    {order_mode::per_key, unbounded, 1024, jitter_mode::none, false},
    {order_mode::global, 64, 16, jitter_mode::full, true, 4},
  };
  uint64_t i = 0;
  for (auto& v : variants) {
    auto seed = base_seed + i++;
    auto cfg = variant_settings(v);
    INFO("seed " << seed << " = KEYLANE_SEED " << base_seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << base_seed << "), "
                 << describe(cfg, v.pull));
    scenario sc{cfg, keys, events * 2 + 16 * keys, seed};
    harness h{sc, v.pull};
    fault_mix mix;
    mix.hang_share = v.hang_share;
    {
      INFO("first run");
      run_phase(h, sc.make_items(events, 3, mix, some_hot_key(keys)));
    }
    REQUIRE_FALSE(sc.m.parked_keys().empty());
    {
      INFO("replay of most parked keys after healing some of their faults, "
           "the first replayed key not healed");
      CHECK(replay_phase(h, 75, 60, mix, 3, true) > 0);
    }
    {
      INFO("replay of every parked key after healing every fault");
      heal_all(sc);
      replay_phase(h, 100, 100, healthy_mix(), 2);
      CHECK(sc.m.parked_keys().empty());
      auto left = h.rt->parked_keys();
      REQUIRE(left);
      CHECK(left->empty());
    }
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

} // namespace

TEST_CASE("under random failures a key's events run and come out in "
          "submission order, each ends exactly once with exact attempts, "
          "and a key parks from its first final failure on",
          "[parking][property]") {
  run_property(fault_seed(), 1200, 48);
}

TEST_CASE("retry delays keep their bounds: at least the capped exponential "
          "delay without jitter, within [0, cap] with full jitter",
          "[parking][backoff]") {
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  fault_mix mix;
  mix.skip = 5;
  mix.transient = 60;
  mix.exhausting = 10;
  mix.permanent = 5;
  mix.async = 30;
  mix.hangs = false;
  // Upper slack: bounds that must hold on a loaded machine, not speed.
  const auto slack = std::chrono::duration<double, std::milli>(5000);
  SECTION("without jitter every delay is at least the capped exponential "
          "delay") {
    auto cfg = fault_settings(order_mode::per_key);
    cfg.max_attempts = 5;
    cfg.initial_backoff_ms = 4;
    cfg.backoff_multiplier = 2.0;
    cfg.max_backoff_ms = 20;
    cfg.attempt_timeout_ms = 0;
    cfg.jitter = jitter_mode::none;
    scenario sc{cfg, 12, 128, seed};
    harness h{sc, false};
    auto gaps = run_phase(h, sc.make_items(72, 3, mix, [](auto& rng) {
                            return rng() % 12;
                          }));
    REQUIRE(gaps.size() >= 20);
    problems p;
    bool capped = false;
    for (auto& g : gaps) {
      // The lower bound is checked by run_phase.
      if (g.gap > g.cap + slack)
        p.add("id ", g.id, ": ", g.gap.count(), " ms after failure ",
              g.failed, ", cap ", g.cap.count(), " ms");
      capped |= g.failed >= 4; // 4 * 2^3 = 32 > 20: the cap applied
    }
    CHECK(capped);
    CHECK_NO_PROBLEMS(p);
    h.shutdown(true);
  }
  SECTION("with full jitter every delay lies within [0, cap], and not all "
          "of them near the cap") {
    auto cfg = fault_settings(order_mode::per_key);
    cfg.max_attempts = 5;
    cfg.initial_backoff_ms = 10;
    cfg.backoff_multiplier = 2.5;
    cfg.max_backoff_ms = 40;
    cfg.attempt_timeout_ms = 0;
    cfg.jitter = jitter_mode::full;
    scenario sc{cfg, 12, 128, seed};
    harness h{sc, false};
    auto gaps = run_phase(h, sc.make_items(72, 3, mix, [](auto& rng) {
                            return rng() % 12;
                          }));
    REQUIRE(gaps.size() >= 20);
    problems p;
    size_t low = 0;
    for (auto& g : gaps) {
      if (g.gap > g.cap + slack)
        p.add("id ", g.id, ": ", g.gap.count(), " ms after failure ",
              g.failed, ", cap ", g.cap.count(), " ms");
      // A gap well below the cap cannot come from a slow machine: only
      // from a draw below the cap.
      low += g.gap < g.cap / 2;
    }
    CHECK_NO_PROBLEMS(p);
    INFO(gaps.size() << " gaps, " << low << " below half their cap");
    CHECK(low > 0);
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("replay runs a key's parked events in their order ahead of newer "
          "events, and one that fails for good again stays parked with those "
          "behind it",
          "[parking][replay][property]") {
  run_replay_property(fault_seed(), 900, 40);
}

TEST_CASE("discard drops a key's parked events, returns how many, and the "
          "key's newer events run",
          "[parking][discard]") {
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  {
    auto cfg = fault_settings(order_mode::per_key);
    const size_t keys = 32;
    scenario sc{cfg, keys, 1024, seed};
    harness h{sc, false};
    run_phase(h, sc.make_items(600, 3, fault_mix{}, some_hot_key(keys)));
    auto parked = sc.m.parked_keys();
    REQUIRE(parked.size() >= 2);
    problems p;
    size_t discarded = 0;
    for (size_t i = 0; i < parked.size(); i += 2) {
      auto k = parked[i];
      auto want = sc.m.take_parked(k).size();
      auto n = h.rt->discard(sc.key_of(k));
      if (!n)
        p.add("discard(", k, ") failed: ", render(n.error()));
      else if (*n != want)
        p.add("discard(", k, ") returned ", *n, ", ", want, " were parked");
      ++discarded;
    }
    CHECK_NO_PROBLEMS(p);
    // Keys that were never parked: nothing to discard or replay.
    for (uint32_t k = 0; k < keys; ++k) {
      if (!sc.m.parked(k).empty())
        continue;
      auto events = h.rt->parked_events(sc.key_of(k));
      REQUIRE(events);
      if (!events->empty())
        continue; // a discarded key; its newer events are checked below
      auto d = h.rt->discard(sc.key_of(k));
      REQUIRE(d);
      CHECK(*d == 0);
    }
    auto r = h.rt->replay(key{"never-seen"});
    REQUIRE(r);
    CHECK(*r == 0);
    // Newer events of every key: discarded keys run them, keys still
    // parked park them behind.
    INFO(discarded << " keys discarded");
    run_phase(h, sc.make_items(3 * keys, 2, healthy_mix(),
                               [keys](auto& rng) { return rng() % keys; }));
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

namespace {

// A fresh directory, removed with everything in it at scope exit.
struct temp_dir {
  fs::path path;
  temp_dir() {
    auto pattern = (fs::temp_directory_path() / "keylane-parking-XXXXXX")
                     .string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

} // namespace

TEST_CASE("with park = sqlite parked keys keep their events in order across "
          "a restart, new events park behind them, and replay runs them all",
          "[parking][durable]") {
  static_assert(codec<item>::available, "the test payload needs a codec");
  auto seed = fault_seed();
  INFO("seed " << seed << " (rerun with KEYLANE_SEED=" << seed << ")");
  auto live_before = item::live.load();
  temp_dir dir;
  auto cfg = fault_settings(order_mode::per_key);
  cfg.park = park_mode::sqlite;
  cfg.park_path = (dir.path / "parked.db").string();
  const size_t keys = 24;
  {
    scenario sc{cfg, keys, 2048, seed};
    sc.string_keys = true;
    std::vector<parked_key> keys_before;
    std::map<uint32_t, std::vector<parked_event<item>>> before;
    {
      INFO("first runtime");
      harness a{sc, false};
      run_phase(a, sc.make_items(400, 3, fault_mix{}, some_hot_key(keys)));
      REQUIRE_FALSE(sc.m.parked_keys().empty());
      auto ks = a.rt->parked_keys();
      REQUIRE(ks);
      keys_before = *ks;
      for (auto k : sc.m.parked_keys()) {
        auto evs = a.rt->parked_events(sc.key_of(k));
        REQUIRE(evs);
        before[k] = std::move(*evs);
      }
      a.shutdown(true);
    }
    {
      INFO("second runtime on the same file");
      harness b{sc, false};
      auto ks = b.rt->parked_keys();
      REQUIRE(ks);
      REQUIRE(ks->size() == keys_before.size());
      for (size_t i = 0; i < ks->size(); ++i) {
        CHECK((*ks)[i].k == keys_before[i].k);
        CHECK((*ks)[i].count == keys_before[i].count);
        CHECK((*ks)[i].first_reason == keys_before[i].first_reason);
        CHECK((*ks)[i].parked_at == keys_before[i].parked_at);
      }
      problems p;
      for (auto& [k, was] : before) {
        auto now = b.rt->parked_events(sc.key_of(k));
        REQUIRE(now);
        if (now->size() != was.size()) {
          p.add("key ", k, ": ", now->size(), " parked events after the "
                "restart, ", was.size(), " before");
          continue;
        }
        for (size_t i = 0; i < was.size(); ++i) {
          auto& x = was[i];
          auto& y = (*now)[i];
          if (x.id != y.id || x.seq != y.seq || x.k != y.k
              || x.payload.id != y.payload.id
              || x.payload.key_id != y.payload.key_id
              || x.payload.producer != y.payload.producer
              || x.reason != y.reason || x.attempts != y.attempts
              || x.parked_at != y.parked_at)
            p.add("key ", k, ": record #", i, " (id ", x.payload.id,
                  ") changed across the restart");
        }
      }
      CHECK_NO_PROBLEMS(p);
      {
        INFO("new events, parked behind for parked keys");
        run_phase(b, sc.make_items(4 * keys, 3, fault_mix{},
                                   [](auto& rng) { return rng() % keys; }));
      }
      {
        INFO("replay of every parked key after healing every fault");
        heal_all(sc);
        replay_phase(b, 100, 100, healthy_mix(), 2);
        CHECK(sc.m.parked_keys().empty());
      }
      b.shutdown(true);
    }
    {
      INFO("third runtime on the same file");
      harness c{sc, false};
      auto ks = c.rt->parked_keys();
      REQUIRE(ks);
      CHECK(ks->empty());
      c.shutdown(true);
    }
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("with park = none a final failure comes out as failed and the "
          "key's later events still run",
          "[parking][none]") {
  auto seed = fault_seed();
  auto live_before = item::live.load();
  uint64_t i = 0;
  for (auto order : {order_mode::per_key, order_mode::global}) {
    auto s = seed + i++;
    auto cfg = fault_settings(order);
    cfg.park = park_mode::none;
    INFO("seed " << s << " = KEYLANE_SEED " << seed << " + " << i - 1
                 << " (rerun with KEYLANE_SEED=" << seed << "), "
                 << describe(cfg, false));
    const size_t keys = 32;
    scenario sc{cfg, keys, 1024, s};
    harness h{sc, false};
    // Nothing is cut short by parking: the hot key runs every one of its
    // events, hangs included, one after another.
    fault_mix mix;
    mix.hang_share = 5;
    run_phase(h, sc.make_items(600, 3, mix, some_hot_key(keys)));
    auto st = h.rt->stats();
    CHECK(st.parked == 0);
    CHECK(st.failed > 0); // the workload did fail for good somewhere
    auto r = h.rt->replay(sc.key_of(0));
    REQUIRE(r);
    CHECK(*r == 0);
    h.shutdown(true);
  }
  CHECK(item::live.load() == live_before);
}

namespace {

// Keeps the completion of a timed-out attempt and finishes it (ok, with a
// stale result) inside a later `on_event` call of the same lane.
class stale_finisher : public handler<item, uint64_t> {
public:
  void on_event(item& x, completion<uint64_t> done) override {
    auto attempt = ++attempts_[x.id];
    if (x.producer == 1 && attempt == 1) {
      stash_.emplace(std::move(done)); // never finished in time
      return;
    }
    if (stash_) {
      stash_->ok(stale_result(x.id));
      stash_.reset();
    }
    if (x.producer == 1)
      done.fail_permanently("second attempt refuses");
    else
      done.ok(expected_result(x));
  }

private:
  std::map<uint64_t, uint32_t> attempts_;
  std::optional<completion<uint64_t>> stash_;
};

} // namespace

TEST_CASE("a timed-out attempt's completion finished late inside a later "
          "handler call of the lane changes nothing",
          "[parking][timeout]") {
  auto live_before = item::live.load();
  {
    handler_factory make = [](const handler_params&) {
      return std::make_unique<stale_finisher>();
    };
    settings cfg;
    cfg.threads = 2;
    cfg.order = order_mode::per_key;
    cfg.attempt_timeout_ms = 40;
    cfg.initial_backoff_ms = 1;
    std::unique_ptr<ev_type> x, y;
    SECTION("inside the same event's next attempt") {
      cfg.max_attempts = 2;
      auto rt = rt_type::start(cfg, make);
      REQUIRE(rt);
      // producer 1: the first attempt hangs, the second refuses for good.
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{1, 0, 1}));
      REQUIRE((*rt)->pull(x, wait_limit));
      CHECK(x->status == outcome::parked);
      CHECK(x->attempts == 2);
      CHECK(x->error == "second attempt refuses");
      CHECK_FALSE(x->result.has_value());
      x.reset();
      (*rt)->stop();
    }
    SECTION("inside the next event of the key") {
      cfg.max_attempts = 1;
      cfg.park = park_mode::none;
      auto rt = rt_type::start(cfg, make);
      REQUIRE(rt);
      // x hangs and times out; y, queued behind it on the same lane,
      // finishes x's completion before its own.
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{1, 0, 1}));
      REQUIRE((*rt)->submit(key{uint64_t{0}}, item{2, 0, 0}));
      REQUIRE((*rt)->pull(x, wait_limit));
      REQUIRE((*rt)->pull(y, wait_limit));
      CHECK(x->payload.id == 1);
      CHECK(x->status == outcome::failed);
      CHECK_FALSE(x->result.has_value());
      CHECK(y->status == outcome::ok);
      CHECK(y->result == expected_result(y->payload));
      x.reset();
      y.reset();
      (*rt)->stop();
    }
  }
  CHECK(item::live.load() == live_before);
}

TEST_CASE("under random failures with large workloads order, accounting, "
          "parking and replay hold",
          "[parking][property][.stress]") {
  auto seed = fault_seed();
  run_property(seed, 20000, 256);
  run_replay_property(seed + 100, 12000, 200);
}
