// SPDX-License-Identifier: Apache-2.0
// The spill file on a disk that fails: a result whose spill write the disk
// refuses stays in memory (none is lost), admission waits, the failure is
// named in the log, no torn record stays in the file, and spilling goes on
// once the disk works again.

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "keylane/detail/spill_fault.hpp"
#include "log_capture.hpp"
#include "runtime_support.hpp"
#include "temp_dir.hpp"

using namespace runtime_support;
namespace fs = std::filesystem;
using test_support::temp_dir;

namespace {

// Holds the completions of the items in `holds` until released; other
// items finish at once with `2 v + 1`.
struct holder {
  std::mutex mtx;
  std::set<int> holds;
  std::map<int, std::shared_ptr<kl::completion<int>>> held;

  kl::handler_factory factory() {
    return from_fn<int, int>([this](auto&, int& v, kl::completion<int> done) {
      std::lock_guard<std::mutex> guard{mtx};
      if (holds.count(v) != 0) {
        held[v] = std::make_shared<kl::completion<int>>(std::move(done));
        return;
      }
      done.ok(2 * v + 1);
    });
  }
  // Whether the handler holds `v` now: an item admitted is not yet run
  // (its lane may wait for its shard's next round).
  bool holding(int v) {
    std::lock_guard<std::mutex> guard{mtx};
    return held.count(v) != 0;
  }
  bool release(int v) {
    std::lock_guard<std::mutex> guard{mtx};
    auto i = held.find(v);
    if (i == held.end())
      return false;
    i->second->ok(2 * v + 1);
    held.erase(i);
    return true;
  }
  void drop() {
    std::lock_guard<std::mutex> guard{mtx};
    held.clear();
  }
};

struct in_order {
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> bad{0};
  void operator()(int_rt::event_type& ev) {
    if (ev.seq != next.load() || ev.status != kl::outcome::ok || !ev.result
        || *ev.result != 2 * ev.payload + 1)
      ++bad;
    next = ev.seq + 1;
  }
};

/// Bytes of the one spill file in `dir`, as the disk has it.
uintmax_t file_bytes(const temp_dir& dir) {
  for (auto& e : fs::directory_iterator{dir.path})
    return fs::file_size(e.path());
  return 0;
}

} // namespace

TEST_CASE("a spill write the disk refuses keeps the result in memory, holds "
          "admission, names spill_failed, leaves no torn record, and "
          "spilling goes on once the disk works again",
          "[spill][disk]") {
  temp_dir dir;
  in_order out;
  log_capture::lines log;
  auto s = two_threads();
  s.order = kl::order_mode::global;
  s.max_active_keys = 8;
  s.window = 16;
  s.spill_path = dir.path.string();
  s.overflow = kl::overflow_policy::reject;
  holder h;
  h.holds = {0, 1000};
  auto rt = start<int_rt>(s, h.factory(),
                          [&](int_rt::event_type& ev) { out(ev); });
  rt->set_log_writer(log.writer());
  at_exit reset{[&] {
    kl::detail::spill_write_fault = 0;
    h.drop();
  }};
  kl::detail::spill_write_fault = ENOSPC;
  // Item 0 waits: everything behind it is held back, past the window it
  // would spill, and every spill write fails.
  int next = 0;
  while (next < 200 && rt->submit(kl::key{uint64_t(next)}, next).ok())
    ++next;
  REQUIRE(eventually([&] { return rt->stats().window == 0; }));
  // Every result behind item 0 reached the sink and stays in its memory.
  REQUIRE(eventually([&] {
    return rt->stats().sink_buffered == static_cast<uint64_t>(next - 1);
  }));
  CHECK(rt->stats().spilled == 0);
  CHECK(rt->stats().spill_write_failures > 0);
  CHECK(rt->stats().spill_bytes == 0);
  CHECK(file_bytes(dir) == 0); // the torn halves were cut off
  auto line = log.wait_for("spill_failed");
  CHECK(line.find("No space left on device") != std::string::npos);
  CHECK(line.find("results stay in memory") != std::string::npos);

  // The disk works again: output drains what memory held, admission opens.
  kl::detail::spill_write_fault = 0;
  REQUIRE(eventually([&] { return h.holding(0); }));
  REQUIRE(h.release(0));
  REQUIRE(eventually([&] { return out.next == static_cast<uint64_t>(next); }));
  // Spilling works again behind a new straggler.
  REQUIRE(eventually(
    [&] { return rt->submit(kl::key{uint64_t(1000)}, 1000).ok(); }));
  int total = next + 1;
  for (int i = 0; i < 100; ++i)
    if (rt->submit(kl::key{uint64_t(2000 + i)}, 2000 + i).ok())
      ++total;
  REQUIRE(eventually([&] { return rt->stats().spilled > 0; }));
  CHECK(log.count("works again after") == 1);
  // Results behind it spilled, but the straggler's own shard may not have
  // run it yet (the spilled results came from the other shard).
  REQUIRE(eventually([&] { return h.holding(1000); }));
  REQUIRE(h.release(1000));
  REQUIRE(rt->drain(60s));
  CHECK(out.next == static_cast<uint64_t>(total));
  CHECK(out.bad == 0); // in order, none lost, none torn
  auto rep = rt->stop();
  CHECK(rep.unfinished.empty());
}
