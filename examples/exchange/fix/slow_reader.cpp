// SPDX-License-Identifier: Apache-2.0
#include "slow_reader.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace exchange {
namespace load {

namespace {

const char soh = '\x01';

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H:%M:%S", &tm);
  return buf;
}

std::string tag(int t, const std::string& v) {
  return std::to_string(t) + "=" + v + soh;
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

} // namespace

std::string frame_fix(const std::string& body) {
  std::string m = tag(8, "FIX.4.4") + tag(9, std::to_string(body.size())) + body;
  unsigned sum = 0;
  for (unsigned char c : m)
    sum += c;
  char cs[8];
  std::snprintf(cs, sizeof cs, "%03u", sum % 256);
  return m + tag(10, cs);
}

bool slow_reader::start(const std::string& host, int port,
                        const std::string& comp_id, uint64_t requests,
                        std::string& error) {
  comp_id_ = comp_id;
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  // A small window, so the server's side fills after a few reports, not
  // after megabytes of them.
  int small = 4096;
  if (fd_ >= 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  if (fd_ < 0 || inet_pton(AF_INET, host.c_str(), &to.sin_addr) != 1
      || ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    error = "slow reader: cannot connect to " + host + ":"
            + std::to_string(port) + ": " + std::strerror(errno);
    return false;
  }
  sender_ = std::thread([this, requests] { run(requests); });
  return true;
}

void slow_reader::run(uint64_t requests) {
  auto header = [this](const char* type, uint64_t seq) {
    return tag(35, type) + tag(49, comp_id_) + tag(56, "KEYLANE")
           + tag(34, std::to_string(seq)) + tag(52, utc_now());
  };
  if (!write_all(fd_, frame_fix(header("A", 1) + tag(98, "0") + tag(108, "30")
                                + tag(141, "Y"))))
    return;
  for (uint64_t i = 0; i < requests && !stop_.load(); ++i) {
    std::string n = std::to_string(i + 1);
    std::string body = header("F", i + 2) + tag(41, "NONE-" + n)
                       + tag(11, comp_id_ + "-slow-" + n) + tag(55, "S0001")
                       + tag(54, "1") + tag(38, "100") + tag(60, utc_now());
    if (!write_all(fd_, frame_fix(body)))
      return;
    ++sent_;
  }
}

void slow_reader::close() {
  stop_ = true;
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR); // a send blocked on a full socket returns
  if (sender_.joinable())
    sender_.join();
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

} // namespace load
} // namespace exchange
