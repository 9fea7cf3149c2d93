// SPDX-License-Identifier: Apache-2.0
#include "server_process.hpp"

#include <cstdio>
#include <cstring>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bots {

namespace {

// One line from `fd`, without its newline; false at end of file.
bool read_line(int fd, std::string& line) {
  line.clear();
  char c;
  while (true) {
    auto n = ::read(fd, &c, 1);
    if (n <= 0)
      return !line.empty();
    if (c == '\n')
      return true;
    line += c;
  }
}

} // namespace

bool server_process::start(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe(fds) != 0)
    return false;
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> args;
    for (auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "game_bots: cannot run %s: %s\n", args[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  fd_ = fds[0];
  std::string line;
  if (!read_line(fd_, line) || line.compare(0, 10, "listening ") != 0) {
    std::fprintf(stderr, "game_bots: the server said '%s', not 'listening'\n",
                 line.c_str());
    stop();
    return false;
  }
  port_ = static_cast<unsigned short>(std::stoi(line.substr(10)));
  reader_ = std::thread{[this] {
    std::string l;
    while (read_line(fd_, l)) {
      if (l.compare(0, 6, "stats ") == 0)
        stats_ = l.substr(6);
      else
        std::fprintf(stderr, "server: %s\n", l.c_str());
    }
  }};
  return true;
}

int server_process::stop() {
  if (pid_ <= 0)
    return status_;
  ::kill(pid_, SIGTERM);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  pid_ = -1;
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (reader_.joinable())
    reader_.join();
  ::close(fd_);
  return status_;
}

} // namespace bots
