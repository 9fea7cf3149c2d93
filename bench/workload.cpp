// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace keylane::bench {

namespace {

constexpr uint64_t seed = 20240517;

// Zipf's law over ranks 1..n with exponent s: a precomputed CDF, sampled
// by binary search. Rank r becomes key r - 1, so key 0 is the hottest.
class zipf {
public:
  zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t r = 1; r <= n; ++r)
      cdf_[r - 1] = (sum += 1.0 / std::pow(static_cast<double>(r), s));
    for (auto& c : cdf_)
      c /= sum;
    cdf_.back() = 1.0;
  }
  template <class Rng>
  uint64_t operator()(Rng& rng) const {
    double u = std::uniform_real_distribution<double>{0.0, 1.0}(rng);
    auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return static_cast<uint64_t>(it - cdf_.begin());
  }

private:
  std::vector<double> cdf_;
};

void number_per_key(workload& w) {
  std::vector<uint32_t> next(w.key_space, 0);
  for (auto& e : w.events)
    e.index = next[e.key]++;
}

} // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names{"uniform_10k", "zipf_100k",
                                              "hot_key", "new_keys"};
  return names;
}

const std::vector<std::string>& on_request_workload_names() {
  static const std::vector<std::string> names{"uniform_16", "uniform_2048"};
  return names;
}

workload make_workload(const std::string& name, size_t n) {
  workload w;
  w.name = name;
  w.events.resize(n);
  std::mt19937_64 rng{seed};
  if (name == "uniform_10k") {
    w.description = "10,000 keys, uniform";
    w.key_space = 10000;
    std::uniform_int_distribution<uint64_t> pick{0, 9999};
    for (auto& e : w.events)
      e.key = pick(rng);
  } else if (name == "uniform_16" || name == "uniform_2048") {
    w.key_space = name == "uniform_16" ? 16 : 2048;
    w.description = std::to_string(w.key_space) + " keys, uniform";
    std::uniform_int_distribution<uint64_t> pick{0, w.key_space - 1};
    for (auto& e : w.events)
      e.key = pick(rng);
  } else if (name == "zipf_100k") {
    w.description = "100,000 keys, Zipf s = 1 (hottest key ~8 %)";
    w.key_space = 100000;
    zipf pick{100000, 1.0};
    for (auto& e : w.events)
      e.key = pick(rng);
  } else if (name == "hot_key") {
    w.description = "key 0 takes half the events, the rest uniform over 10,000";
    w.key_space = 10001;
    std::uniform_int_distribution<uint64_t> pick{1, 10000};
    for (auto& e : w.events)
      e.key = (rng() & 1) ? 0 : pick(rng);
  } else if (name == "new_keys") {
    w.description = "every event a new key (lane spawn and retire churn)";
    w.key_space = n;
    for (size_t i = 0; i < n; ++i)
      w.events[i].key = i;
  } else {
    throw std::invalid_argument("unknown workload: " + name);
  }
  number_per_key(w);
  return w;
}

} // namespace keylane::bench
