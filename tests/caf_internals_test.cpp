// SPDX-License-Identifier: Apache-2.0
// keylane/detail/caf_internals.hpp against the CAF it was built with: the
// header's static_asserts catch a renamed or retyped member at compile
// time; these cases catch a member that kept its type but changed meaning
// (another counter, handlers kept elsewhere), which would let a retiring
// lane's late responses run, or drop another lane's.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>

#include <caf/all.hpp>

#include <keylane/detail/caf_internals.hpp>

using keylane::detail::caf_internals;

namespace {

// What a client actor saw around one request, and what the server saw.
struct observed {
  uint64_t before = 0;        // last_request_number before the request
  uint64_t after = 0;         // ... and right after it
  size_t pending = 0;         // pending_responses().size() after it
  uint64_t pending_key = 0;   // the number of the pending entry
  uint64_t server_saw = 0;    // the request's number as the server got it
  size_t pending_answered = 0; // pending_responses().size() once answered
};

caf::behavior echo_plus_one(caf::event_based_actor* self,
                            std::shared_ptr<observed> o) {
  return {[self, o](int x) {
    o->server_saw = caf_internals::number(self->current_message_id());
    return x + 1;
  }};
}

// Its state comes as spawn arguments, not captures: CAF 0.17.6 spawns a
// function actor without arguments by dereferencing a null tuple pointer
// (UBSan reports it).
caf::behavior client(caf::event_based_actor* self,
                     std::shared_ptr<observed> o,
                     std::shared_ptr<std::promise<void>> done,
                     caf::actor server) {
  o->before = caf_internals::last_request_number(*self);
  self->request(server, caf::infinite, 41).then([self](int) {
    // CAF drops the entry around this handler; look once it returned.
    self->send(self, caf::atom("check"));
  });
  o->after = caf_internals::last_request_number(*self);
  auto& pending = caf_internals::pending_responses(*self);
  o->pending = pending.size();
  if (!pending.empty())
    o->pending_key = caf_internals::number(pending.begin()->first);
  return {[self, o, done](caf::atom_value) {
    o->pending_answered = caf_internals::pending_responses(*self).size();
    done->set_value();
    self->quit();
  }};
}

observed one_request() {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto o = std::make_shared<observed>();
  auto done = std::make_shared<std::promise<void>>();
  auto server = sys.spawn(echo_plus_one, o);
  sys.spawn(client, o, done, server);
  auto f = done->get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  return *o;
}

} // namespace

TEST_CASE("the request number read through caf_internals is the one CAF "
          "gives the request",
          "[caf_internals]") {
  auto o = one_request();
  CHECK(o.after == o.before + 1);
  CHECK(o.server_saw == o.after);
}

TEST_CASE("caf_internals' pending responses hold a request's handler until "
          "it is answered",
          "[caf_internals]") {
  auto o = one_request();
  REQUIRE(o.pending == 1);
  CHECK(o.pending_key == o.after);
  CHECK(o.pending_answered == 0);
}
