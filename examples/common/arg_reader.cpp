// SPDX-License-Identifier: Apache-2.0
#include "arg_reader.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace keylane::cli {

bool arg_reader::next() {
  if (++i_ >= argc_)
    return false;
  arg_ = argv_[i_];
  return true;
}

std::optional<std::string> arg_reader::value(const char* name) {
  auto n = std::strlen(name);
  if (arg_ == name) {
    if (i_ + 1 >= argc_)
      fail(std::string{name} + " needs a value");
    return std::string{argv_[++i_]};
  }
  if (arg_.size() > n && arg_.compare(0, n, name) == 0 && arg_[n] == '=')
    return arg_.substr(n + 1);
  return std::nullopt;
}

std::optional<uint64_t> arg_reader::count(const char* name, uint64_t min) {
  auto text = value(name);
  if (!text)
    return std::nullopt;
  uint64_t x = 0;
  auto first = text->data();
  auto last = first + text->size();
  auto [end, ec] = std::from_chars(first, last, x);
  if (text->empty() || ec != std::errc{} || end != last || x < min)
    fail(std::string{name} + " needs an integer >= " + std::to_string(min)
         + ", got '" + *text + "'");
  return x;
}

void arg_reader::fail(const std::string& what) const {
  std::cerr << program_ << ": " << what << "\ntry '" << program_
            << " --help'\n";
  std::exit(2);
}

} // namespace keylane::cli
