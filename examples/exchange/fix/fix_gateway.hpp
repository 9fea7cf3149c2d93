// SPDX-License-Identifier: Apache-2.0
#pragma once

// The exchange's FIX acceptor behind a QuickFIX-free interface. Keep this
// header C++14: the matcher includes it as C++17, the FIX code as C++14.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "../orders.hpp"

namespace exchange {

/// Counters of the FIX side, for the server's report.
struct gateway_stats {
  uint64_t requests = 0;          ///< order requests handed to the matcher
  uint64_t reports = 0;           ///< reports sent
  uint64_t session_rejects = 0;   ///< session-level Reject (35=3) sent
  uint64_t business_rejects = 0;  ///< BusinessMessageReject (35=j) sent
  uint64_t logons = 0;
  uint64_t logouts = 0;
  uint64_t unsent = 0;            ///< reports whose session was not logged on
  uint64_t slow_dropped = 0;      ///< reports dropped: their client did not read
  uint64_t slow_cut = 0;          ///< connections ended for that
  uint64_t connections = 0;       ///< connections accepted
  uint64_t oversized_cut = 0;     ///< dropped: a BodyLength past the limit
  uint64_t pre_logon_cut = 0;     ///< dropped before logon: too many bytes,
                                  ///< a garbled header, or not a valid Logon
  uint64_t logon_timeout_cut = 0; ///< dropped: no Logon in time
  uint64_t discarded_bytes = 0;   ///< bytes that could not start a message
  uint64_t unread_cut = 0;        ///< dropped: past max unsent bytes
};

/// What one connection may cost the acceptor. Before its Logon is
/// complete a connection is a stranger: it gets a small buffer, a byte
/// budget and a deadline; after it, the largest message a client may send.
struct gateway_limits {
  /// The most bytes a connection may send before its Logon is complete,
  /// garbage included, and so the largest Logon.
  size_t logon_bytes = 4096;
  /// The largest message of a logged-on session, header and trailer
  /// included: the most a connection ever buffers. A BodyLength past it
  /// drops the connection before its body is read.
  size_t message_bytes = 65536;
  /// A connection with no complete Logon after this many ms is dropped.
  uint32_t logon_timeout_ms = 5000;
  /// The most bytes written for a connection that its socket has not
  /// taken (its client does not read); past it the connection is dropped.
  /// The session outboxes keep far less unread (two TestRequest rounds);
  /// this bounds it without them (`--session-queue 0`) and for what
  /// QuickFIX sends itself.
  size_t unsent_bytes = 16u << 20;
};

/// A FIX 4.4 acceptor: one thread owns every socket, frames messages within
/// `gateway_limits` and hands them to QuickFIX's sessions. Requests
/// arrive on the acceptor's one thread, which serves every connection, and
/// are handed to `on_request` in each session's order; `on_request` must
/// not wait for long, since every session waits with it. `send` is
/// thread-safe.
class fix_gateway {
public:
  using request_fn = std::function<void(order_request&&)>;

  virtual ~fix_gateway() = default;

  /// Reads the QuickFIX session settings file `settings_file`; a
  /// `port` > 0 replaces its SocketAcceptPort. `session_queue` is the most
  /// reports held for one session: a client that lets more pile up (it
  /// does not read) loses the rest and its connection, and the other
  /// sessions never wait for it; 0 sends from `send`'s caller, one thread
  /// hop fewer, and what a client does not read piles up in QuickFIX's
  /// send queue without a bound.
  /// `limits` bounds what each connection may make the acceptor keep.
  /// Returns null and sets `error` if the file is bad or the port cannot
  /// be bound.
  static std::unique_ptr<fix_gateway>
  start(const std::string& settings_file, int port, size_t session_queue,
        const gateway_limits& limits, request_fn on_request,
        std::string& error);

  /// Queues `r` for session `r.session`; never waits on the network.
  virtual void send(const exec_report& r) = 0;

  /// Logs every session out and stops the acceptor.
  virtual void stop() = 0;

  virtual gateway_stats stats() const = 0;

  /// The number of sessions logged on now.
  virtual int logged_on() const = 0;
};

} // namespace exchange
