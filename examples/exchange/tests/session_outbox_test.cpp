// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "fix/session_outbox.hpp"

using exchange::exec_report;
using exchange::fix::session_outbox;
using pushed = session_outbox::pushed;

namespace {

// A session whose socket is full until open() is called: send blocks.
struct fake_session {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  int entered = 0; // writes begun
  std::vector<std::string> sent; // ClOrdIDs, in the order written
  std::vector<size_t> cut_after; // how many were written at each cut

  void write(const exec_report& r) {
    std::unique_lock<std::mutex> lock(m);
    ++entered;
    cv.wait(lock, [this] { return open; });
    sent.push_back(r.cl_ord_id);
  }
  void cut() {
    std::lock_guard<std::mutex> lock(m);
    cut_after.push_back(sent.size());
  }
  void let_through() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
  template <class Pred>
  bool wait_for(Pred p) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(m);
        if (p())
          return true;
      }
      if (std::chrono::steady_clock::now() > until)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
};

exec_report report(int i) {
  exec_report r;
  r.cl_ord_id = "c" + std::to_string(i);
  return r;
}

} // namespace

TEST_CASE("a session's outbox never makes the caller wait, keeps its limit, "
          "sends what it took in order and cuts the connection after a drop",
          "[exchange][outbox]") {
  fake_session fs;
  session_outbox box(3, [&](const exec_report& r) { fs.write(r); },
                     [&] { fs.cut(); });
  // The first report is taken by the outbox's thread and blocks in the
  // socket; three more fill the queue; the fifth is dropped, and so is
  // every later one, room or not.
  REQUIRE(box.push(report(1)) == pushed::queued);
  REQUIRE(fs.wait_for([&] { return fs.entered == 1; }));
  for (int i = 2; i <= 4; ++i)
    CHECK(box.push(report(i)) == pushed::queued);
  CHECK(box.push(report(5)) == pushed::dropped);
  const int queued = 4;
  {
    std::lock_guard<std::mutex> lock(fs.m);
    CHECK(fs.cut_after.empty()); // not before what was queued is written
  }
  fs.let_through();
  REQUIRE(fs.wait_for([&] { return fs.cut_after.size() == 1; }));
  {
    std::lock_guard<std::mutex> lock(fs.m);
    std::vector<std::string> expect;
    for (int i = 1; i <= queued; ++i)
      expect.push_back("c" + std::to_string(i));
    CHECK(fs.sent == expect);
    CHECK(fs.cut_after[0] == static_cast<size_t>(queued));
  }
  CHECK(box.push(report(9)) == pushed::dropped); // room, but until the next logon

  box.reset(); // logged on again
  REQUIRE(box.push(report(10)) == pushed::queued);
  REQUIRE(fs.wait_for([&] { return fs.sent.back() == "c10"; }));
  box.stop();
  CHECK(box.push(report(11)) == pushed::stopped);
  std::lock_guard<std::mutex> lock(fs.m);
  CHECK(fs.cut_after.size() == 1); // nothing dropped since the logon
}

TEST_CASE("a session's outbox stopped after a drop still cuts the connection "
          "once, after what it had queued",
          "[exchange][outbox]") {
  fake_session fs;
  fs.let_through();
  std::atomic<bool> hold{true};
  std::atomic<int> taken{0};
  session_outbox box(1, [&](const exec_report& r) {
    ++taken;
    while (hold.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fs.write(r);
  }, [&] { fs.cut(); });
  REQUIRE(box.push(report(1)) == pushed::queued);
  REQUIRE(fs.wait_for([&] { return taken.load() == 1; }));
  REQUIRE(box.push(report(2)) == pushed::queued);
  REQUIRE(box.push(report(3)) == pushed::dropped);
  std::thread stopper([&] { box.stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  hold = false;
  stopper.join();
  std::lock_guard<std::mutex> lock(fs.m);
  CHECK(fs.sent == std::vector<std::string>{"c1", "c2"});
  REQUIRE(fs.cut_after.size() == 1);
  CHECK(fs.cut_after[0] == 2);
}
