// SPDX-License-Identifier: Apache-2.0
// keylane itself: per-key lanes on CAF, with order = none, per_key or
// global, on CAF's sharing or stealing scheduler, and the --set overrides.
// Output through the callback (keylane's consumer thread). The
// keylane_state ways are per_key with a stateful handler.

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>

#include <caf/meta/type_name.hpp>

#include <keylane/config_loader.hpp>
#include <keylane/runtime.hpp>
#include <keylane/stateful_handler.hpp>

#include "../way.hpp"
#include "lanes_retired.hpp"

namespace keylane::bench {

namespace {

using rt_type = keylane::runtime<item, uint64_t>;

// The layout docs/performance.md measured ("An event in three cache
// lines"): past 192 bytes mimalloc serves it from the 224-byte bin, where
// neighbouring events share lines.
static_assert(sizeof(rt_type::event_type) <= 192,
              "the benchmark's event outgrew mimalloc's 192-byte bin");

struct spin_handler final : keylane::handler<item, uint64_t> {
  explicit spin_handler(uint64_t iters) : iters_(iters) {}
  void on_event(item& it, keylane::completion<uint64_t> done) override {
    done.ok(do_work(it, iters_));
  }
  uint64_t iters_;
};

// The keylane_state ways' per-key state: events seen and the sum of their
// work results (16 bytes; its record in the store is a few more).
struct key_totals {
  uint64_t count = 0;
  uint64_t sum = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, key_totals& x) {
  return f(caf::meta::type_name("key_totals"), x.count, x.sum);
}

// spin_handler's work, folded into the key's state.
struct state_handler final
  : keylane::stateful_handler<item, uint64_t, key_totals> {
  explicit state_handler(uint64_t iters) : iters_(iters) {}
  void on_event(item& it, keylane::completion<uint64_t> done) override {
    auto r = do_work(it, iters_);
    auto& st = state();
    ++st.count;
    st.sum += r;
    done.ok(r);
  }
  uint64_t iters_;
};

// A fresh directory under the system's temporary one ($TMPDIR, else
// /tmp), or "" if none could be made.
std::string make_temp_dir() {
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  if (ec)
    base = "/tmp";
  auto pattern = (base / "keylane_bench_state.XXXXXX").string();
  return ::mkdtemp(pattern.data()) ? pattern : std::string{};
}

// The settings of every keylane way before --set; order and scheduler
// come from the way, threads from its row (--threads). CAF's workers
// (scheduler.max-threads) and the shards follow `threads` in keylane
// itself, the shards unless --set scheduler.shards.
settings base_settings(int threads) {
  settings s;
  s.threads = static_cast<size_t>(threads);
  s.max_active_keys = 4096;
  s.window = 65536;
  // As in the runs docs/performance.md quotes (the default before 0.2.0):
  // the hot_key workload gives one key half of all events.
  s.key_backlog = 65536;
  s.overflow = overflow_policy::block;
  return s;
}

order_mode parse_order(const std::string& s) {
  if (s == "none")
    return order_mode::none;
  if (s == "per_key")
    return order_mode::per_key;
  return order_mode::global;
}

class keylane_way final : public way {
public:
  // `state` none: spin_handler; else state_handler with that store.
  keylane_way(order_mode order, scheduler_policy sched, int threads,
              std::vector<std::string> sets,
              state_backend state = state_backend::none)
    : order_(order), sched_(sched), threads_(threads), sets_(std::move(sets)),
      state_(state) {}

  ~keylane_way() override {
    rt_.reset();
    if (!state_dir_.empty()) {
      std::error_code ec; // a leftover temporary directory is no failure
      std::filesystem::remove_all(state_dir_, ec);
    }
  }

  std::string start(output& out, uint64_t work_iters) override {
    auto s = base_settings(threads_);
    s.order = order_;
    s.scheduler = sched_;
    if (state_ != state_backend::none) {
      s.state_store = state_;
      s.state_checkpoint_ms = 100;
      if (state_ == state_backend::rocksdb) {
        state_dir_ = make_temp_dir();
        if (state_dir_.empty())
          return "keylane_state: cannot make a temporary directory for the "
                 "state store (set TMPDIR to a writable one)";
        s.state_path = state_dir_;
      }
    }
    if (auto err = apply_overrides(s, sets_))
      return "keylane settings: " + render(err);
    handler_factory make;
    if (state_ == state_backend::none)
      make = [work_iters](const handler_params&) {
        return std::make_unique<spin_handler>(work_iters);
      };
    else
      make = [work_iters](const handler_params&) {
        return std::make_unique<state_handler>(work_iters);
      };
    auto rt = rt_type::start(std::move(s), std::move(make),
                             [&out](rt_type::event_type& e) {
                               if (e.status == outcome::ok && e.result)
                                 out.deliver(e.payload, *e.result);
                               else
                                 out.note_failure();
                             });
    if (!rt)
      return "keylane start failed: " + render(rt.error());
    rt_ = std::move(*rt);
    return {};
  }

  // With overflow = reject a full window or key backlog turns the event
  // away; the producer retries it (counted) as a program using that policy
  // would, rather than ending the run. The open-loop driver charges the
  // wait to the event's latency, as it does a blocking submit's. Any other
  // refusal (stopped) ends the run.
  bool submit(const item& it) override {
    for (;;) {
      auto res = rt_->submit(keylane::key{it.key}, item{it});
      if (res.ok())
        return true;
      if (res.code() != errc::window_full
          && res.code() != errc::key_backlog_full)
        return false;
      ++rejected_;
      // Credit comes back as the sink emits: give its threads the core.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  uint64_t rejected_submits() const override { return rejected_; }

  std::optional<state_figures> keyed_state() const override {
    if (state_ == state_backend::none || !rt_)
      return std::nullopt;
    auto st = rt_->stats();
    state_figures f;
    f.loads = st.state_loads;
    f.load_failures = st.state_load_failures;
    f.load_latency = st.state_load_latency;
    f.writes = st.state_writes;
    f.write_bytes = st.state_write_bytes;
    f.checkpoints = st.state_checkpoints;
    f.write_failures = st.state_write_failures;
    return f;
  }

  bool settle(std::chrono::milliseconds timeout) override {
    return wait_lanes_retired(*rt_, timeout);
  }

  uint64_t lanes_spawned() const override {
    return rt_ ? rt_->stats().lanes_spawned : 0;
  }

  std::string stop() override {
    auto [st, note] = stop_runtime(rt_);
    if (st.rejected != rejected_)
      note += (note.empty() ? "" : "; ") + std::to_string(st.rejected)
              + " submits rejected, " + std::to_string(rejected_)
              + " of them retried";
    if (st.lanes_spawned != st.lanes_retired + st.active_lanes)
      note += (note.empty() ? "" : "; ") + std::string{"lanes spawned "}
              + std::to_string(st.lanes_spawned) + " != retired "
              + std::to_string(st.lanes_retired) + " + active "
              + std::to_string(st.active_lanes);
    if (st.state_load_failures != 0 || st.state_write_failures != 0)
      note += (note.empty() ? "" : "; ") + std::string{"state: "}
              + std::to_string(st.state_load_failures) + " loads and "
              + std::to_string(st.state_write_failures)
              + " batch writes failed";
    return note;
  }

private:
  order_mode order_;
  scheduler_policy sched_;
  int threads_;
  std::vector<std::string> sets_;
  state_backend state_;
  std::string state_dir_; // rocksdb: this run's store, removed at the end
  std::unique_ptr<rt_type> rt_;
  std::atomic<uint64_t> rejected_{0}; // submits may come from several threads
};

} // namespace

std::unique_ptr<way> make_keylane(const std::string& order,
                                  const std::string& scheduler, int threads,
                                  const std::vector<std::string>& sets) {
  return std::make_unique<keylane_way>(parse_order(order),
                                       scheduler == "stealing"
                                         ? scheduler_policy::stealing
                                         : scheduler_policy::sharing,
                                       threads, sets);
}

std::unique_ptr<way> make_keylane_state(const std::string& store,
                                        const std::string& scheduler,
                                        int threads,
                                        const std::vector<std::string>& sets) {
  return std::make_unique<keylane_way>(order_mode::per_key,
                                       scheduler == "stealing"
                                         ? scheduler_policy::stealing
                                         : scheduler_policy::sharing,
                                       threads, sets,
                                       store == "memory"
                                         ? state_backend::memory
                                         : state_backend::rocksdb);
}

std::string check_keylane_overrides(const std::vector<std::string>& sets) {
  std::string problems;
  auto add = [&problems](const std::string& text) {
    problems += (problems.empty() ? "" : "\n") + text;
  };
  // Keys the benchmark sets itself, per way and row; keylane checks the rest.
  std::vector<std::string> rest;
  for (const auto& a : sets) {
    auto key = a.substr(0, a.find('='));
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == "runtime.order")
      add("--set " + a + ": keylane_bench sets runtime.order per way; pick "
          "the ways with --ways keylane_none,keylane_per_key,keylane_global");
    else if (key == "scheduler.policy")
      add("--set " + a + ": keylane_bench sets scheduler.policy per row; "
          "pick them with --schedulers sharing,stealing");
    else if (key == "scheduler.threads")
      add("--set " + a + ": keylane_bench sets scheduler.threads per row; "
          "pick the counts with --threads, e.g. --threads 1,2,4");
    else if (key.rfind("handler", 0) == 0)
      add("--set " + a + ": keylane_bench runs its own handler, which has "
          "no name and reads no parameters");
    else if (key == "state.store" || key == "state.path")
      add("--set " + a + ": keylane_bench sets " + key + " per way (a fresh "
          "temporary directory per run); pick the store with --ways "
          "keylane_state (rocksdb) or keylane_state_memory");
    else
      rest.push_back(a);
  }
  auto base = base_settings(2);
  auto s = base;
  if (auto err = apply_overrides(s, rest))
    add(render(err));
  else if (problems.empty()
           && (s.order != base.order || s.scheduler != base.scheduler
               || s.threads != base.threads
               || s.handler != base.handler || !s.params.values().empty()
               || s.state_store != base.state_store
               || s.state_path != base.state_path))
    // Spelled another way (a quoted key, an inline table).
    add("--set: runtime.order, scheduler.policy, scheduler.threads, "
        "handler.*, state.store and state.path are keylane_bench's own; use "
        "--ways, --schedulers and --threads");
  return problems;
}

std::string keylane_settings_toml(int threads,
                                  const std::vector<std::string>& sets) {
  auto s = base_settings(threads);
  (void) apply_overrides(s, sets); // checked by check_keylane_overrides
  return to_toml(s);
}

std::string keylane_settings_note(const std::vector<int>& threads,
                                  const std::vector<std::string>& sets) {
  auto b = base_settings(threads.front());
  std::string counts;
  for (int n : threads)
    counts += (counts.empty() ? "" : ", ") + std::to_string(n);
  auto out = (threads.size() == 1 ? "threads = " + counts
                                  : "threads per row (" + counts + ")")
             + ", max_active_keys = "
             + std::to_string(b.max_active_keys) + ", window = "
             + std::to_string(b.window) + ", key_backlog = "
             + std::to_string(b.key_backlog) + ", overflow = " + to_string(b.overflow)
             + ", order and scheduler per row, other keys at their defaults";
  for (const auto& a : sets)
    out += (&a == &sets.front() ? "; then --set " : " --set ") + a;
  return out;
}

} // namespace keylane::bench
