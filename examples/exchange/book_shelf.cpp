// SPDX-License-Identifier: Apache-2.0
#include "book_shelf.hpp"

namespace exchange {

order_book book_shelf::take(const std::string& symbol) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = books_.find(symbol);
  if (i == books_.end())
    return order_book{symbol};
  auto book = std::move(i->second);
  books_.erase(i);
  if (book.resting() > 0)
    ++restored_;
  return book;
}

void book_shelf::put(order_book&& book) {
  ++retires_;
  resting_kept_ += book.resting();
  auto symbol = book.symbol();
  std::lock_guard<std::mutex> guard{mtx_};
  books_.insert_or_assign(std::move(symbol), std::move(book));
}

} // namespace exchange
