// SPDX-License-Identifier: Apache-2.0
#pragma once

// Parses the Prometheus text exposition format as the tests need it: each
// sample line keyed by its series exactly as printed (`name{labels}`), and
// the TYPE and HELP of each family.

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace prom_text {

/// One scrape's content.
struct exposition {
  /// Sample values by series, e.g. `keylane_events_total{outcome="ok"}`.
  std::map<std::string, double> samples;
  /// Family name to "counter", "gauge", "histogram", ...
  std::map<std::string, std::string> types;
  /// Family name to its HELP text.
  std::map<std::string, std::string> help;
  /// Lines that are neither comments nor `series value`.
  std::vector<std::string> malformed;

  bool has(const std::string& series) const {
    return samples.count(series) > 0;
  }

  /// The value of `series`, or -1 if it is missing (counts are never < 0).
  double at(const std::string& series) const {
    auto i = samples.find(series);
    return i == samples.end() ? -1 : i->second;
  }

  /// The buckets of histogram `name` as (upper bound, cumulative count),
  /// in the order printed.
  std::vector<std::pair<double, double>> buckets(const std::string& name) const {
    std::vector<std::pair<double, double>> out;
    auto prefix = name + "_bucket{le=\"";
    for (auto& [series, value] : samples)
      if (series.compare(0, prefix.size(), prefix) == 0)
        out.emplace_back(std::strtod(series.c_str() + prefix.size(), nullptr),
                         value);
    // The map orders by text; order by bound instead.
    std::sort(out.begin(), out.end());
    return out;
  }
};

inline exposition parse(const std::string& text) {
  exposition e;
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    if (line[0] == '#') {
      std::istringstream words{line};
      std::string hash, kind, name, rest;
      words >> hash >> kind >> name;
      std::getline(words, rest);
      if (!rest.empty() && rest[0] == ' ')
        rest.erase(0, 1);
      if (kind == "TYPE")
        e.types[name] = rest;
      else if (kind == "HELP")
        e.help[name] = rest;
      continue;
    }
    auto space = line.rfind(' ');
    if (space == std::string::npos || space == 0) {
      e.malformed.push_back(line);
      continue;
    }
    char* end = nullptr;
    auto value = std::strtod(line.c_str() + space + 1, &end);
    if (end == line.c_str() + space + 1)
      e.malformed.push_back(line);
    else
      e.samples[line.substr(0, space)] = value;
  }
  return e;
}

} // namespace prom_text
