// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

namespace keylane::cli {

namespace {

// Redraws per second: enough to look alive, few enough to cost nothing.
constexpr auto period = std::chrono::milliseconds(250);

void write_stderr(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

} // namespace

bool progress_wanted(bool json) {
  return !json && isatty(STDERR_FILENO) == 1;
}

progress::progress(std::string label, uint64_t total, std::string unit,
                   bool enabled)
  : label_(std::move(label)),
    unit_(std::move(unit)),
    total_(total),
    enabled_(enabled),
    t0_(std::chrono::steady_clock::now()) {
  if (enabled_)
    thread_ = std::thread([this] { run(); });
}

progress::~progress() {
  finish();
}

void progress::say(std::string_view line) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (drawn_) {
    write_stderr("\r\033[K");
    drawn_ = false;
  }
  write_stderr(line);
}

void progress::finish() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_)
      return;
    stopping_ = true;
    if (drawn_)
      write_stderr("\r\033[K");
    drawn_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void progress::run() {
  std::unique_lock<std::mutex> lock{mtx_};
  while (!cv_.wait_for(lock, period, [this] { return stopping_; }))
    draw();
}

void progress::draw() {
  using namespace std::chrono;
  double elapsed = duration<double>(steady_clock::now() - t0_).count();
  auto done = done_.load(std::memory_order_relaxed);
  char buf[160];
  int n = 0;
  double rate = static_cast<double>(done) / elapsed;
  int rate_digits = rate >= 100 ? 0 : 1;
  if (total_ > 0)
    n = std::snprintf(buf, sizeof buf, "%s: %llu/%llu %s (%.0f%%)  %.*f/s  %.1f s",
                      label_.c_str(), static_cast<unsigned long long>(done),
                      static_cast<unsigned long long>(total_), unit_.c_str(),
                      100.0 * static_cast<double>(done)
                        / static_cast<double>(total_),
                      rate_digits, rate, elapsed);
  else
    n = std::snprintf(buf, sizeof buf, "%s: %llu %s  %.*f/s  %.1f s",
                      label_.c_str(), static_cast<unsigned long long>(done),
                      unit_.c_str(), rate_digits, rate, elapsed);
  if (n <= 0)
    return;
  // "\033[K" erases what a longer previous line left behind.
  std::string line = "\r";
  line.append(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
  line += "\033[K";
  write_stderr(line);
  drawn_ = true;
}

} // namespace keylane::cli
