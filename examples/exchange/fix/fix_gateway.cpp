// SPDX-License-Identifier: Apache-2.0
// fix_gateway::start: QuickFIX's sessions, with in-memory stores and no
// logs (a run writes nothing to the source tree), behind fix_acceptor, one
// thread that owns every socket.
//
// Not the ThreadedSocketAcceptor: in QuickFIX 1.15 its connection threads
// parse a connection's first message outside their try block, so one
// malformed message before logon (issue 28: 8=FIX.4.4|9=4|x=1|10=000|)
// threw FIX::InvalidMessage out of a thread and aborted the server. Not
// QuickFIX's single-threaded SocketAcceptor either, which fixed that: it
// buffers whatever a connection sends without a bound and keeps a
// connection that never logs on forever (fix_acceptor.hpp).

#include "fix_gateway.hpp"

#include <fstream>
#include <mutex>

#include <quickfix/MessageStore.h>
#include <quickfix/SessionSettings.h>

#include "fix_acceptor.hpp"
#include "gateway_application.hpp"

namespace exchange {

namespace {

// `port` replaces SocketAcceptPort in the defaults and in every session.
// SessionSettings::set refuses to overwrite a session, so the settings are
// rebuilt.
FIX::SessionSettings with_port(const FIX::SessionSettings& in, int port) {
  FIX::SessionSettings out;
  FIX::Dictionary defaults = in.get();
  defaults.setInt("SocketAcceptPort", port);
  out.set(defaults);
  for (const FIX::SessionID& id : in.getSessions()) {
    FIX::Dictionary d = in.get(id);
    d.setInt("SocketAcceptPort", port);
    out.set(id, d);
  }
  return out;
}

class quickfix_gateway final : public fix_gateway {
public:
  quickfix_gateway(request_fn on_request, size_t session_queue,
                   const gateway_limits& limits)
    : app_(std::move(on_request), session_queue), limits_(limits) {}

  ~quickfix_gateway() override { stop(); }

  bool start(const std::string& settings_file, int port, std::string& error) {
    try {
      std::ifstream in(settings_file);
      if (!in) {
        error = settings_file + ": cannot be opened";
        return false;
      }
      FIX::SessionSettings settings(in);
      if (port > 0)
        settings = with_port(settings, port);
      acceptor_.reset(new fix::fix_acceptor(app_, store_, settings, limits_));
      for (const auto& s : acceptor_->sessions())
        app_.attach(s.first, s.second);
      std::string why;
      if (acceptor_->start(why))
        return true;
      error = settings_file + ": " + why;
      acceptor_.reset();
      return false;
    } catch (const FIX::ConfigError& e) {
      error = settings_file + ": " + e.what();
    } catch (const std::exception& e) {
      error = settings_file + ": " + e.what()
              + (port > 0 ? " (port " + std::to_string(port) + ")" : "");
    }
    acceptor_.reset();
    return false;
  }

  void send(const exec_report& r) override { app_.send(r); }

  // The acceptor (and with it QuickFIX's sessions, which `send` points
  // into) lives until the destructor, so a report racing with stop finds
  // its session logged out and is counted unsent.
  void stop() override {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (acceptor_ && !stopped_) {
      // Logs every session out (up to 10 s for the answers; a client that
      // does not answer is disconnected after LogoutTimeout), joins the
      // acceptor's thread and closes every connection; then stop_sending
      // marks every session down, so nothing sends after it.
      acceptor_->stop();
      app_.stop_sending();
      stopped_ = true;
    }
  }

  gateway_stats stats() const override {
    gateway_stats st = app_.stats();
    if (acceptor_)
      acceptor_->add_stats(st);
    return st;
  }

  int logged_on() const override { return app_.logged_on(); }

private:
  fix::gateway_application app_;
  const gateway_limits limits_;
  FIX::MemoryStoreFactory store_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
  std::unique_ptr<fix::fix_acceptor> acceptor_;
};

} // namespace

std::unique_ptr<fix_gateway>
fix_gateway::start(const std::string& settings_file, int port,
                   size_t session_queue, const gateway_limits& limits,
                   request_fn on_request, std::string& error) {
  std::unique_ptr<quickfix_gateway> g(
    new quickfix_gateway(std::move(on_request), session_queue, limits));
  if (!g->start(settings_file, port, error))
    return nullptr;
  return g;
}

} // namespace exchange
