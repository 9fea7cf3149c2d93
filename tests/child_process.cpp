// SPDX-License-Identifier: Apache-2.0
#include "child_process.hpp"

#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

extern char** environ;

namespace test_support {

namespace {

std::vector<char*> c_strings(const std::vector<std::string>& xs) {
  std::vector<char*> out;
  for (auto& x : xs)
    out.push_back(const_cast<char*>(x.c_str()));
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> with_first(std::string first,
                                    const std::vector<std::string>& rest) {
  std::vector<std::string> out{std::move(first)};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

} // namespace

child_process::child_process(const std::string& exe,
                             const std::vector<std::string>& args)
  : child_process(exe, with_first(exe, args), nullptr, {}, false) {}

child_process child_process::test_case(const std::string& test_spec,
                                       const std::string& env_name,
                                       const std::string& env_value,
                                       const std::vector<int>& close_in_child) {
  std::vector<std::string> env;
  auto prefix = env_name + "=";
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0)
      env.emplace_back(*e);
  env.push_back(prefix + env_value);
  return child_process("/proc/self/exe", {"keylane_tests", test_spec}, &env,
                       close_in_child, true);
}

child_process::child_process(const std::string& exe,
                             const std::vector<std::string>& argv,
                             const std::vector<std::string>* env,
                             const std::vector<int>& close_in_child,
                             bool quiet) {
  auto c_argv = c_strings(argv);
  auto c_env = env != nullptr ? c_strings(*env) : std::vector<char*>{};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : close_in_child)
    posix_spawn_file_actions_addclose(&actions, fd);
  if (quiet)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, exe.c_str(), &actions, nullptr, c_argv.data(),
                  env != nullptr ? c_env.data() : environ)
      == 0)
    pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
}

child_process::child_process(child_process&& other) noexcept
  : pid_(other.pid_), reaped_(other.reaped_), status_(other.status_) {
  other.pid_ = -1;
}

child_process::~child_process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

void child_process::reaped(int status) noexcept {
  reaped_ = true;
  status_ = status;
}

void child_process::signal(int sig) noexcept {
  if (running())
    ::kill(pid_, sig);
}

int child_process::wait() {
  if (running()) {
    int status = 0;
    REQUIRE(::waitpid(pid_, &status, 0) == pid_);
    reaped(status);
  }
  return status_;
}

int child_process::wait_for(std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped(status);
      break;
    }
    if (std::chrono::steady_clock::now() > until)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!reaped_)
    return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

void child_process::kill_and_reap() {
  signal(SIGKILL);
  auto status = wait();
  INFO("child exit code " << (WIFEXITED(status) ? WEXITSTATUS(status) : 0));
  REQUIRE(WIFSIGNALED(status));
}

child_pipe::child_pipe() {
  REQUIRE(::pipe(fds_) == 0);
}

child_pipe::~child_pipe() {
  close_read();
  close_write();
}

void child_pipe::close_read() noexcept {
  if (fds_[0] >= 0)
    ::close(fds_[0]);
  fds_[0] = -1;
}

void child_pipe::close_write() noexcept {
  if (fds_[1] >= 0)
    ::close(fds_[1]);
  fds_[1] = -1;
}

bool child_pipe::read_some(int timeout_ms) {
  pollfd p{fds_[0], POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0)
    return false;
  char chunk[65536];
  auto n = ::read(fds_[0], chunk, sizeof(chunk));
  if (n <= 0)
    return false;
  buf_.append(chunk, static_cast<size_t>(n));
  return true;
}

} // namespace test_support
