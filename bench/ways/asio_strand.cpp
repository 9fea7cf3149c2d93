// SPDX-License-Identifier: Apache-2.0
// Baseline 4: one boost::asio strand per key on an io_context run by
// --threads threads (2 by default). Strands keep per-key order; every key that has work can run.
// Strands are created lazily on the submitting thread and kept (the naive
// way: nothing retires them).

#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "../way.hpp"

namespace keylane::bench {

namespace {

class asio_strand final : public way {
public:
  using executor = boost::asio::io_context::executor_type;

  // The concurrency hint is the number of threads that run the context.
  explicit asio_strand(int threads) : thread_count_(threads), ioc_{threads} {}

  std::string start(output& out, uint64_t work_iters) override {
    out_ = &out;
    iters_ = work_iters;
    for (int i = 0; i < thread_count_; ++i)
      threads_.emplace_back([this] { ioc_.run(); });
    return {};
  }

  bool submit(const item& it) override {
    auto s = strands_.find(it.key);
    if (s == strands_.end())
      s = strands_.emplace(it.key, boost::asio::make_strand(ioc_)).first;
    boost::asio::post(s->second, [this, it] {
      out_->deliver(it, do_work(it, iters_));
    });
    return true;
  }

  std::string stop() override {
    guard_.reset();
    for (auto& t : threads_)
      t.join();
    return {};
  }

private:
  int thread_count_;
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<executor> guard_{ioc_.get_executor()};
  std::unordered_map<uint64_t, boost::asio::strand<executor>> strands_;
  std::vector<std::thread> threads_;
  output* out_ = nullptr;
  uint64_t iters_ = 0;
};

} // namespace

std::unique_ptr<way> make_asio_strand(int threads) {
  return std::make_unique<asio_strand>(threads);
}

} // namespace keylane::bench
