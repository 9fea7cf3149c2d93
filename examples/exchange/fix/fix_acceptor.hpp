// SPDX-License-Identifier: Apache-2.0
#pragma once

// The gateway's FIX acceptor: its own sockets and epoll loop in front of
// QuickFIX's sessions. C++14 and QuickFIX.

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <quickfix/Application.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionFactory.h>
#include <quickfix/SessionSettings.h>

#include "fix_connection.hpp"
#include "fix_gateway.hpp"

namespace exchange {
namespace fix {

/// Accepts FIX connections for the acceptor sessions of a QuickFIX
/// settings file and serves them all from one thread, as QuickFIX's
/// single-threaded SocketAcceptor does, but owning the sockets, so what
/// a connection may make it keep is bounded (`gateway_limits`): QuickFIX's
/// SocketConnection appends every byte it reads to an unbounded string,
/// waits for whatever BodyLength says and rescans all it holds on every
/// read, and its SocketAcceptor keeps its connections private. Messages
/// reach QuickFIX's Session::next on that thread, one at a time, in each
/// connection's order; QuickFIX's timers run there once a second. The
/// sessions are created in the constructor and live as long as this
/// object; `start` and `stop` may be called from any one thread.
class fix_acceptor {
public:
  /// Creates the sessions of `settings` whose ConnectionType is acceptor.
  /// Throws FIX::ConfigError for bad settings.
  fix_acceptor(FIX::Application& app, FIX::MessageStoreFactory& store,
               const FIX::SessionSettings& settings, const gateway_limits& limits);
  ~fix_acceptor();

  fix_acceptor(const fix_acceptor&) = delete;
  fix_acceptor& operator=(const fix_acceptor&) = delete;

  /// The sessions, for the application's table.
  [[nodiscard]] const std::map<FIX::SessionID, FIX::Session*>& sessions() const noexcept {
    return sessions_;
  }

  /// Binds every SocketAcceptPort and starts the thread; false with
  /// `error` if a port cannot be bound.
  bool start(std::string& error);

  /// As QuickFIX's Acceptor::stop: logs every session out, waits up to
  /// 10 s for them to go down (the thread keeps serving meanwhile), then
  /// ends the thread and closes every connection.
  void stop();

  /// Adds the acceptor's counters to `st`.
  void add_stats(gateway_stats& st) const;

private:
  void run();
  void accept_all(int listener);
  void end(int fd, close_reason why); // closes it and lets it go
  void tick(bool session_timer);
  bool any_logged_on() const;

  const gateway_limits limits_;
  FIX::SessionSettings settings_;
  FIX::SessionFactory factory_;
  std::map<FIX::SessionID, FIX::Session*> sessions_;
  std::map<int, std::set<FIX::SessionID>> port_sessions_;
  std::map<int, int> listeners_; // fd -> port
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // The acceptor's thread only.
  std::unordered_map<int, std::unique_ptr<fix_connection>> connections_;
  bool listeners_paused_ = false; // out of descriptors until the next tick

  std::atomic<uint64_t> connections_total_{0};
  std::atomic<uint64_t> oversized_cut_{0};
  std::atomic<uint64_t> pre_logon_cut_{0};
  std::atomic<uint64_t> logon_timeout_cut_{0};
  std::atomic<uint64_t> discarded_{0}; // of closed connections
  std::atomic<uint64_t> unread_cut_{0};
};

} // namespace fix
} // namespace exchange
