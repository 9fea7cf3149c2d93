// SPDX-License-Identifier: Apache-2.0
#include "drill.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include <keylane/detail/state_record.hpp>
#include <keylane/runtime.hpp>
#include <keylane/state_store.hpp>

#include "account.hpp"

namespace transfers {

namespace {

std::string name(size_t i) { return "acct-" + std::to_string(i); }

// A drill's child writes one byte to this file descriptor once its work is
// under way, so that its kill lands mid-work however slowly it started.
constexpr const char* ready_fd_env = "TRANSFERS_DRILL_READY_FD";

// Events a child finishes before it says it is under way: by then several
// checkpoints (20 ms) have written state and sent messages.
constexpr uint64_t ready_after = 1000;

// Account `i`'s inputs, the same in every run: its opening credit, then
// its debits.
std::vector<transfer> inputs_of(const drill_plan& p, size_t i) {
  std::mt19937_64 rng{p.seed * 1000003 + i};
  std::vector<transfer> in;
  in.push_back(transfer{"", p.opening, true, 1});
  for (size_t j = 0; j < p.debits; ++j) {
    auto to = rng() % p.accounts;
    auto amount = static_cast<long>(1 + rng() % 100);
    in.push_back(transfer{name(to), amount, false, static_cast<long>(j + 2)});
  }
  return in;
}

struct expected_account {
  long balance = 0;
  uint64_t events = 0; // inputs and credits received, each applied once
};

} // namespace

int drill_run(const drill_plan& p) {
  keylane::settings cfg;
  cfg.order = keylane::order_mode::none;
  cfg.park = keylane::park_mode::none;
  cfg.max_attempts = 1000000; // a full message budget: try again shortly
  cfg.initial_backoff_ms = 1;
  cfg.max_backoff_ms = 10;
  cfg.state_store = keylane::state_backend::rocksdb;
  cfg.state_path = p.dir;
  cfg.state_checkpoint_ms = p.checkpoint_ms;
  cfg.messaging_exactly_once = p.exactly_once;
  int ready_fd = -1;
  if (const char* fd = std::getenv(ready_fd_env))
    ready_fd = std::atoi(fd);
  auto finished = std::make_shared<std::atomic<uint64_t>>(0);
  auto rt = keylane::runtime<transfer, long>::start(
    cfg,
    [](const keylane::handler_params&) {
      return std::make_unique<account_handler>();
    },
    [finished, ready_fd](keylane::event<transfer, long>&) {
      if (finished->fetch_add(1) + 1 == ready_after && ready_fd >= 0) {
        char b = 1;
        (void) !::write(ready_fd, &b, 1);
      }
    });
  if (!rt) {
    std::fprintf(stderr, "transfers: %s\n",
                 keylane::render(rt.error()).c_str());
    return 2;
  }
  std::vector<std::vector<transfer>> in;
  for (size_t i = 0; i < p.accounts; ++i)
    in.push_back(inputs_of(p, i));
  // Round by round over the accounts, so that a kill finds all of them
  // busy.
  for (size_t j = 0; j <= p.debits; ++j)
    for (size_t i = 0; i < p.accounts; ++i)
      if (auto r = (*rt)->submit(name(i), in[i][j]); !r) {
        std::fprintf(stderr, "transfers: %s\n", keylane::to_string(r.code()));
        return 2;
      }
  auto drained = (*rt)->drain(std::chrono::minutes(5));
  (*rt)->stop();
  return drained ? 0 : 2;
}

int drill_check(const drill_plan& p) {
  std::map<std::string, expected_account> want;
  for (size_t i = 0; i < p.accounts; ++i) {
    auto& a = want[name(i)];
    for (auto& m : inputs_of(p, i)) {
      ++a.events;
      if (m.credit) {
        a.balance += m.amount;
        continue;
      }
      a.balance -= m.amount;
      auto& b = want[m.to];
      b.balance += m.amount;
      ++b.events;
    }
  }
  auto store = keylane::open_rocksdb_state_store(p.dir, true);
  if (!store) {
    std::fprintf(stderr, "transfers: %s\n",
                 keylane::render(store.error()).c_str());
    return 2;
  }
  // The records as keylane-state reads them: the events applied, and the
  // state as the account's codec wrote it.
  size_t seen = 0, wrong = 0, kept = 0;
  long total = 0;
  auto err = (*store)->scan([&](const keylane::key& k, std::string_view bytes) {
    auto rec = keylane::detail::decode_state_record(bytes);
    auto st = rec ? keylane::codec<account>::decode(rec->state)
                  : caf::expected<account>{rec.error()};
    if (!st) {
      std::printf("%s: %s\n", k.to_string().c_str(),
                  keylane::render(st.error()).c_str());
      ++wrong;
      return true;
    }
    ++seen;
    total += st->balance;
    kept += rec->outbox.size();
    auto& w = want[k.to_string()];
    if (st->balance != w.balance || rec->events != w.events) {
      if (wrong < 10)
        std::printf("%s: balance %ld events %llu, expected %ld and %llu\n",
                    k.to_string().c_str(), st->balance,
                    static_cast<unsigned long long>(rec->events), w.balance,
                    static_cast<unsigned long long>(w.events));
      ++wrong;
    }
    return true;
  });
  if (err) {
    std::fprintf(stderr, "transfers: %s\n", keylane::render(err).c_str());
    return 2;
  }
  auto expected_total = static_cast<long>(p.accounts) * p.opening;
  std::printf("accounts %zu checked %zu wrong %zu total %ld expected %ld "
              "kept %zu\n",
              p.accounts, seen, wrong, total, expected_total, kept);
  return seen == p.accounts && wrong == 0 && total == expected_total ? 0 : 1;
}

namespace {

/// Starts a child run; `ready` gets the read end of its pipe (-1 if none).
pid_t spawn(const drill_plan& p, const char* self, int& ready) {
  auto s = [](auto x) { return std::to_string(x); };
  std::vector<std::string> args{
    self, "--drill-run", "--state", p.dir, "--accounts", s(p.accounts),
    "--debits", s(p.debits), "--seed", s(p.seed), "--exactly-once",
    p.exactly_once ? "on" : "off"};
  int fds[2] = {-1, -1};
  ready = -1;
  if (::pipe2(fds, O_CLOEXEC) != 0)
    fds[0] = fds[1] = -1;
  auto pid = fork();
  if (pid == 0) {
    if (fds[0] >= 0) {
      ::fcntl(fds[1], F_SETFD, 0); // the run keeps its end across exec
      ::setenv(ready_fd_env, std::to_string(fds[1]).c_str(), 1);
    }
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(self, argv.data());
    _exit(127);
  }
  if (fds[1] >= 0)
    ::close(fds[1]);
  ready = fds[0];
  return pid;
}

/// Waits up to `limit` for the child's byte; false when its end closed
/// first (it ended) or the time ran out.
bool await_ready(int fd, std::chrono::milliseconds limit) {
  if (fd < 0)
    return false;
  pollfd pfd{fd, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(limit.count())) <= 0)
    return false;
  char b = 0;
  return ::read(fd, &b, 1) == 1;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    ;
  return status;
}

} // namespace

int drill(const drill_plan& p, size_t kills, bool control, const char* self) {
  std::error_code ec;
  std::filesystem::remove_all(p.dir, ec);
  std::mt19937_64 rng{p.seed};
  size_t killed = 0, runs = 0;
  // A run that ends before its kill counts as a run, not a kill; the
  // drill goes on until `kills` runs died mid-way.
  while (killed < kills && runs < 4 * kills + 4) {
    int ready = -1;
    auto pid = spawn(p, self, ready);
    if (pid < 0) {
      std::perror("transfers: fork");
      return 2;
    }
    ++runs;
    // The kill's moment counts from when the child's work is under way:
    // counted from the fork, a child slowed by a busy machine (sanitizers,
    // parallel tests) was killed before it wrote anything, and the control
    // found nothing to find.
    auto delay = std::chrono::milliseconds(50 + rng() % 550);
    await_ready(ready, std::chrono::minutes(2));
    if (ready >= 0)
      ::close(ready);
    auto at = std::chrono::steady_clock::now() + delay;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0
           && std::chrono::steady_clock::now() < at)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (done == pid) {
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "transfers: run %zu failed (status %d)\n", runs,
                     status);
        return 2;
      }
      continue;
    }
    kill(pid, SIGKILL);
    wait_for(pid);
    ++killed;
  }
  int ready = -1;
  auto last = wait_for(spawn(p, self, ready));
  if (ready >= 0)
    ::close(ready);
  if (!WIFEXITED(last) || WEXITSTATUS(last) != 0) {
    std::fprintf(stderr, "transfers: the last run failed (status %d)\n", last);
    return 2;
  }
  std::printf("runs %zu killed %zu\n", runs + 1, killed);
  auto checked = drill_check(p);
  if (checked == 2)
    return 2;
  if (killed < kills) {
    std::fprintf(stderr, "transfers: only %zu of %zu runs could be killed "
                         "mid-way (raise --debits)\n", killed, kills);
    return 2;
  }
  if (control) {
    std::printf(checked == 1 ? "control: the drill found the loss or "
                               "double it must find\n"
                             : "control: NOTHING found\n");
    return checked == 1 ? 0 : 1;
  }
  return checked;
}

} // namespace transfers
