// SPDX-License-Identifier: Apache-2.0
#include "keylane/detail/spill_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "keylane/detail/spill_fault.hpp"
#include "keylane/errc.hpp"

namespace keylane::detail {

std::atomic<int> spill_write_fault{0};

namespace {

caf::error failure(const std::string& what) {
  return make_error(errc::spill_failed, what + ": " + std::strerror(errno));
}

} // namespace

caf::expected<std::unique_ptr<spill_file>>
spill_file::open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return make_error(errc::spill_failed, "sink.spill_path = \"" + dir
                                            + "\": cannot create directory: "
                                            + ec.message());
  // Unique per process and runtime, so runtimes can share a directory.
  static std::atomic<uint64_t> counter{0};
  auto path = (std::filesystem::path{dir}
               / ("keylane-spill-" + std::to_string(::getpid()) + "-"
                  + std::to_string(counter++) + ".bin"))
                .string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return failure("sink.spill_path = \"" + dir + "\": cannot create " + path);
  return std::unique_ptr<spill_file>{new spill_file(fd, std::move(path))};
}

spill_file::~spill_file() {
  ::close(fd_);
  ::unlink(path_.c_str());
}

caf::expected<uint64_t> spill_file::append(std::string_view bytes) {
  auto at = end_;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = -1;
    if (int fault = spill_write_fault.load(std::memory_order_relaxed)) {
      // The test hook: a torn write, then the disk's error.
      static_cast<void>(::pwrite(fd_, bytes.data(), bytes.size() / 2,
                                 static_cast<off_t>(at)));
      errno = fault;
    } else {
      n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                   static_cast<off_t>(at + done));
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      auto err = failure("cannot write spill file " + path_);
      // Leave no partial record behind.
      if (::ftruncate(fd_, static_cast<off_t>(at)) != 0) {
        // The next append overwrites it anyway: writes go to `end_`.
      }
      return err;
    }
    done += static_cast<size_t>(n);
  }
  end_ += bytes.size();
  return at;
}

caf::expected<std::string> spill_file::read(uint64_t offset,
                                            uint32_t len) const {
  std::string out(len, '\0');
  size_t done = 0;
  while (done < len) {
    auto n = ::pread(fd_, out.data() + done, len - done,
                     static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return failure("cannot read spill file " + path_);
    if (n == 0)
      return make_error(errc::spill_failed,
                        "cannot read spill file " + path_ + ": it ends before "
                          "the record at offset " + std::to_string(offset)
                          + " (" + std::to_string(len)
                          + " bytes): was it truncated?");
    done += static_cast<size_t>(n);
  }
  return out;
}

void spill_file::clear() {
  if (end_ == 0)
    return;
  if (::ftruncate(fd_, 0) == 0)
    end_ = 0;
}

} // namespace keylane::detail
