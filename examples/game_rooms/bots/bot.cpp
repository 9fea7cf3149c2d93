// SPDX-License-Identifier: Apache-2.0
#include "bot.hpp"

#include <cstdlib>

#include "../room_map.hpp"

namespace bots {

namespace beast = boost::beast;
namespace net = boost::asio;

namespace {

// The sum of the scores of the players in a snapshot.
int64_t score_sum(const std::string& snap) {
  int64_t sum = 0;
  for (auto at = snap.find("\np "); at != std::string::npos;
       at = snap.find("\np ", at + 1)) {
    unsigned long long id = 0;
    long x = 0, y = 0, score = 0;
    if (std::sscanf(snap.c_str() + at + 3, "%llu %ld %ld %ld", &id, &x, &y,
                    &score)
        == 4)
      sum += score;
  }
  return sum;
}

} // namespace

bot::bot(net::io_context& ioc, bot_plan plan, bot_stats& stats)
  : ws_(net::make_strand(ioc)), timer_(ws_.get_executor()),
    plan_(std::move(plan)), stats_(stats), rng_(plan_.seed) {
  ++stats_.bots;
}

void bot::start(net::ip::tcp::endpoint to) {
  beast::get_lowest_layer(ws_).async_connect(
    to, [self = shared_from_this(), to](beast::error_code ec) {
      if (ec) {
        ++self->stats_.dropped;
        return;
      }
      beast::error_code ignored;
      beast::get_lowest_layer(self->ws_).socket().set_option(
        net::ip::tcp::no_delay(true), ignored);
      self->ws_.async_handshake(
        to.address().to_string() + ":" + std::to_string(to.port()), "/",
        [self](beast::error_code ec) {
          if (ec) {
            ++self->stats_.dropped;
            return;
          }
          self->open_ = true;
          self->write("join " + self->plan_.room + " " + self->plan_.name);
          self->read();
          // Spread the bots' inputs over the interval.
          std::uniform_int_distribution<int> d(0, static_cast<int>(
                                                    self->plan_.every.count()));
          self->timer_.expires_after(std::chrono::milliseconds(d(self->rng_)));
          self->timer_.async_wait([self](beast::error_code ec) {
            if (!ec)
              self->on_timer();
          });
        });
    });
}

void bot::stop() {
  stopping_ = true;
  if (in_transit_) {
    ++stats_.transfers_lost;
    --stats_.in_transit;
  }
  in_transit_ = false;
  timer_.cancel();
  if (open_) {
    open_ = false;
    ws_.async_close(beast::websocket::close_code::normal,
                    [self = shared_from_this()](beast::error_code) {});
  }
}

void bot::read() {
  ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec,
                                                  size_t) {
    if (ec) {
      if (!self->stopping_)
        ++self->stats_.dropped;
      if (self->in_transit_) // counted as dropped, not as a lost transfer
        --self->stats_.in_transit;
      self->in_transit_ = false;
      self->open_ = false;
      self->timer_.cancel();
      return;
    }
    self->on_message(beast::buffers_to_string(self->in_.data()));
    self->in_.consume(self->in_.size());
    self->read();
  });
}

void bot::on_message(const std::string& text) {
  if (text.compare(0, 5, "snap ") == 0)
    return on_snapshot(text);
  if (text.compare(0, 8, "welcome ") == 0) {
    char room[64] = {0};
    unsigned long long id = 0;
    if (std::sscanf(text.c_str(), "welcome %llu %63s", &id, room) != 2) {
      ++stats_.errors;
      return;
    }
    if (id_ == 0)
      ++stats_.joined;
    id_ = id;
    room_ = room;
    last_tick_ = 0;
    pending_.clear(); // inputs sent to the old room are not acknowledged here
    if (text.size() >= 7 && text.compare(text.size() - 7, 7, " portal") == 0) {
      if (in_transit_) {
        ++stats_.arrivals;
        --stats_.in_transit;
      }
      in_transit_ = false;
    }
    return;
  }
  if (text.compare(0, 7, "portal ") == 0) {
    ++stats_.portals;
    if (!in_transit_)
      ++stats_.in_transit;
    in_transit_ = true;
    return;
  }
  if (text.compare(0, 17, "err portal_closed") == 0) {
    ++stats_.refused;
    if (in_transit_)
      --stats_.in_transit;
    in_transit_ = false;
    return;
  }
  if (text.compare(0, 15, "err rooms_full ") == 0) {
    ++stats_.join_refused;
    return;
  }
  if (text.compare(0, 5, "chat ") == 0) {
    ++stats_.chats;
    return;
  }
  ++stats_.errors;
}

void bot::on_snapshot(const std::string& text) {
  auto now = clock::now();
  ++stats_.snapshots;
  char room[64] = {0};
  unsigned long long tick = 0;
  if (std::sscanf(text.c_str(), "snap %63s %llu", room, &tick) != 2
      || room_ != room) {
    ++stats_.errors;
    return;
  }
  if (last_tick_ != 0) {
    if (tick <= last_tick_)
      ++stats_.out_of_order;
    else
      stats_.lost += tick - last_tick_ - 1;
    stats_.interval[room_].record(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_snap_)
        .count());
  }
  last_tick_ = tick;
  last_snap_ = now;
  if (room_ == "room-0") {
    if (stats_.hot_first_tick == 0 || tick < stats_.hot_first_tick) {
      stats_.hot_first_tick = tick;
      stats_.hot_first_scores = score_sum(text);
    }
    if (tick > stats_.hot_last_tick) {
      stats_.hot_last_tick = tick;
      stats_.hot_last_scores = score_sum(text);
    }
  }
  auto mine = "\np " + std::to_string(id_) + " ";
  auto at = text.find(mine);
  if (at == std::string::npos)
    return;
  long x = 0, y = 0, score = 0;
  unsigned long long ack = 0;
  if (std::sscanf(text.c_str() + at + mine.size(), "%ld %ld %ld %llu", &x, &y,
                  &score, &ack)
      != 4)
    return;
  x_ = static_cast<int32_t>(x);
  y_ = static_cast<int32_t>(y);
  while (!pending_.empty() && pending_.front().first <= ack) {
    stats_.latency.record(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            now - pending_.front().second)
                            .count());
    pending_.pop_front();
  }
}

void bot::on_timer() {
  if (!open_ || stopping_)
    return;
  if (!quiet_ && id_ != 0 && !in_transit_) {
    std::uniform_int_distribution<int> dir(-1, 1);
    if (plan_.walker && x_ >= 0 && wander_ == 0) {
      int32_t tx = game::room_map::portal_x, ty = game::room_map::portal_y;
      dx_ = tx > x_ ? 1 : tx < x_ ? -1 : 0;
      dy_ = ty > y_ ? 1 : ty < y_ ? -1 : 0;
      stuck_ = x_ == last_x_ && y_ == last_y_ ? stuck_ + 1 : 0;
      if (stuck_ >= 3) { // caught at a pillar's corner: wander a little
        wander_ = 4;
        stuck_ = 0;
      }
    } else {
      dx_ = dir(rng_);
      dy_ = dir(rng_);
      if (wander_ > 0)
        --wander_;
    }
    last_x_ = x_;
    last_y_ = y_;
    ++seq_;
    pending_.emplace_back(seq_, clock::now());
    ++stats_.inputs;
    write("input " + std::to_string(seq_) + " " + std::to_string(dx_) + " "
          + std::to_string(dy_));
  }
  timer_.expires_after(plan_.every);
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec)
      self->on_timer();
  });
}

void bot::write(std::string text) {
  out_.push_back(std::move(text));
  if (!writing_)
    write_next();
}

void bot::write_next() {
  if (!open_) {
    out_.clear();
    writing_ = false;
    return;
  }
  writing_ = true;
  ws_.text(true);
  ws_.async_write(net::buffer(out_.front()),
                  [self = shared_from_this()](beast::error_code ec, size_t) {
                    self->out_.pop_front();
                    if (ec || self->out_.empty()) {
                      self->writing_ = false;
                      return;
                    }
                    self->write_next();
                  });
}

} // namespace bots
