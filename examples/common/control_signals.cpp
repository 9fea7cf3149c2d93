// SPDX-License-Identifier: Apache-2.0
#include "control_signals.hpp"

#include <csignal>
#include <cstdio>
#include <string>

#include <pthread.h>
#include <signal.h>

namespace keylane::cli {

namespace {

// The signals `block_control_signals` blocked: written once, before any
// other thread exists, and only read afterwards.
sigset_t taken;

bool ignored(int signo) {
  struct sigaction old {};
  return sigaction(signo, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
}

// Ends the process the way the signal would have without our mask: the
// shell then reports it as usual (130 for Ctrl-C), as before --serve existed.
[[noreturn]] void die_of(int signo) {
  std::signal(signo, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signo); // delivered to this thread, now unblocked: the process ends
  std::_Exit(128 + signo);
}

// One of the signals the signal thread waits for, SIGHUP first; 0 if none.
int wake_signal() {
  for (int signo : {SIGHUP, SIGTERM, SIGINT})
    if (sigismember(&taken, signo) == 1)
      return signo;
  return 0;
}

} // namespace

void block_control_signals() {
  sigemptyset(&taken);
  // A signal the parent told us to ignore (`nohup`, `&` in a script) stays
  // ignored: blocking it would queue it for sigwait instead.
  for (int signo : {SIGHUP, SIGINT, SIGTERM})
    if (!ignored(signo))
      sigaddset(&taken, signo);
  pthread_sigmask(SIG_BLOCK, &taken, nullptr);
}

const char* signal_name(int signo) {
  switch (signo) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: {
      static thread_local std::string name;
      name = "signal " + std::to_string(signo);
      return name.c_str();
    }
  }
}

control_signals::control_signals(std::function<void()> on_reload)
  : on_reload_(std::move(on_reload)) {
  // With all three ignored there is nothing to wait for.
  if (wake_signal() != 0)
    thread_ = std::thread([this] { run(); });
}

control_signals::~control_signals() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    quitting_ = true;
  }
  if (!thread_.joinable())
    return;
  // A signal aimed at the signal thread alone wakes its sigwait; it sees
  // `quitting_` and returns.
  pthread_kill(thread_.native_handle(), wake_signal());
  thread_.join();
}

int control_signals::serve() {
  std::unique_lock<std::mutex> lock{mtx_};
  serving_ = true;
  cv_.wait(lock, [this] { return stop_signal_ != 0; });
  return stop_signal_;
}

void control_signals::run() {
  for (;;) {
    int signo = 0;
    if (sigwait(&taken, &signo) != 0)
      continue;
    std::unique_lock<std::mutex> lock{mtx_};
    if (quitting_)
      return;
    if (signo == SIGHUP) {
      lock.unlock();
      on_reload_();
      continue;
    }
    if (!serving_)
      die_of(signo);
    if (stop_signal_ == 0)
      stop_signal_ = signo;
    cv_.notify_all();
  }
}

} // namespace keylane::cli
