// SPDX-License-Identifier: Apache-2.0
// scheduler.threads = 0 takes the CPUs the process may use (its affinity
// mask, a cgroup quota), not every CPU of the machine: a server pinned to
// one core by `taskset` gets one worker, not one per hardware thread.

#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include "keylane/usable_cpus.hpp"
#include "runtime_support.hpp"
#include "thread_names.hpp"

using namespace runtime_support;
using thread_names::caf_workers;

namespace {

// Workers running while a runtime with `threads` is up (they name
// themselves once they run: the count settles).
int workers_with(size_t threads) {
  auto s = two_threads();
  s.threads = threads;
  auto rt = int_rt::start(
    s, from_fn<int, int>([](auto&, int& v, kl::completion<int> done) {
      done.ok(v);
    }));
  REQUIRE(rt);
  int seen = 0;
  eventually([&] {
    auto now = caf_workers();
    bool settled = now == seen && now > 0;
    seen = now;
    return settled;
  });
  std::this_thread::sleep_for(50ms);
  seen = caf_workers();
  (*rt)->stop();
  return seen;
}

// Pins the calling thread to the first CPU of its mask, and back.
struct pinned_to_one_cpu {
  cpu_set_t before;
  pinned_to_one_cpu() {
    CPU_ZERO(&before);
    REQUIRE(::pthread_getaffinity_np(::pthread_self(), sizeof before, &before)
            == 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &before)) {
        CPU_SET(c, &one);
        break;
      }
    REQUIRE(::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) == 0);
  }
  ~pinned_to_one_cpu() {
    ::pthread_setaffinity_np(::pthread_self(), sizeof before, &before);
  }
};

} // namespace

TEST_CASE("a cgroup cpu.max line gives the CPUs its quota allows, rounded up",
          "[config][cpus]") {
  using kl::detail::cpus_of_cpu_max;
  CHECK(cpus_of_cpu_max("200000 100000") == 2);
  CHECK(cpus_of_cpu_max("250000 100000\n") == 3);
  CHECK(cpus_of_cpu_max("50000 100000") == 1);
  CHECK(cpus_of_cpu_max("max 100000") == 0);
  CHECK(cpus_of_cpu_max("") == 0);
  CHECK(cpus_of_cpu_max("200000") == 0);
  CHECK(cpus_of_cpu_max("-5 100000") == 0);
  CHECK(cpus_of_cpu_max("200000 0") == 0);
  CHECK(cpus_of_cpu_max("99999999999999999999 100000") == 0);
}

TEST_CASE("scheduler.threads = 0 starts one worker per CPU the process may "
          "use, not per CPU of the machine",
          "[config][cpus]") {
  auto one = workers_with(1);
  auto two = workers_with(2);
  REQUIRE(two == one + 1); // the count sees the workers
  pinned_to_one_cpu pin;
  CHECK(kl::usable_cpus() == 1);
  CHECK(workers_with(0) == one);
}
