// SPDX-License-Identifier: Apache-2.0
#include "retry_verdict.hpp"

#include <sstream>

#include "account.hpp"

namespace ledger {

namespace {

// Each account's balance after each of its events, applied in order.
std::vector<std::vector<int64_t>> expected_balances(const workload& w) {
  std::vector<account_state> states(w.events_per_account.size());
  std::vector<std::vector<int64_t>> out(w.events_per_account.size());
  for (const auto& ev : w.events) {
    (void) apply(states[ev.account], ev);
    out[ev.account].push_back(states[ev.account].balance);
  }
  return out;
}

// The submitted events of `account`, in order.
std::vector<ledger_event> events_of(const workload& w, uint32_t account) {
  std::vector<ledger_event> out;
  for (const auto& ev : w.events)
    if (ev.account == account)
      out.push_back(ev);
  return out;
}

bool same_event(const ledger_event& x, const ledger_event& y) {
  return x.account == y.account && x.index == y.index && x.kind == y.kind
         && x.amount == y.amount && x.latency == y.latency;
}

// True when `out` holds indices first, first + 1, ..., last - 1, in order.
bool in_sequence(const std::vector<output_record>& out, uint32_t first,
                 uint32_t last) {
  if (out.size() != last - first)
    return false;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].index != first + i)
      return false;
  return true;
}

std::string indices(const std::vector<output_record>& out) {
  std::ostringstream s;
  for (size_t i = 0; i < out.size(); ++i)
    s << (i == 0 ? "#" : " #") << out[i].index;
  return out.empty() ? "nothing" : s.str();
}

// "#1 parked after 2 attempts (reason)".
std::string describe(const output_record& r) {
  std::string s = "#" + std::to_string(r.index) + " "
                  + keylane::to_string(r.status) + " after "
                  + std::to_string(r.attempts) + " attempt"
                  + (r.attempts == 1 ? "" : "s");
  if (!r.error.empty())
    s += " (" + r.error + ")";
  return s;
}

std::string render(const std::vector<std::pair<std::string, uint64_t>>& xs) {
  std::string s = "{";
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i == 0 ? "" : ", ") + xs[i].first + ": "
         + std::to_string(xs[i].second);
  return s + "}";
}

} // namespace

retry_verdict judge(const retry_spec& spec, const retry_observed& obs) {
  retry_verdict v;
  const auto& w = obs.w;
  v.events = w.events.size();
  auto problem = [&](std::string what) { v.problems.push_back(what); };
  auto balances = expected_balances(w);
  const auto bad = spec.permanent_account;
  const uint32_t bad_first = spec.permanent_index;
  const uint32_t bad_last = w.events_per_account.at(bad);

  // Order in both passes; counts and retries on the way.
  uint64_t all_tombstones = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const auto& outs = pass == 0 ? obs.first_pass : obs.replay_pass;
    for (uint32_t a = 0; a < outs.size(); ++a) {
      const auto& out = outs[a];
      const auto& name = w.names[a];
      // The replay runs the parked tail of one account only; stray outputs
      // of other accounts are the replay check's business.
      uint32_t first = pass == 0 ? 0 : bad_first;
      uint32_t last = w.events_per_account[a];
      if ((pass == 0 || a == bad) && !in_sequence(out, first, last)) {
        v.order_kept = false;
        problem(name + (pass == 0 ? "" : " (replay)") + ": the outputs were "
                + indices(out) + ", not #" + std::to_string(first) + " to #"
                + std::to_string(last - 1) + " in order");
      }
      bool parked_seen = false;
      for (const auto& r : out) {
        if (r.attempts > 1)
          v.retried[a] += r.attempts - 1;
        if (r.status == keylane::outcome::parked) {
          parked_seen = true;
          ++all_tombstones;
          v.parked_tombstones += pass == 0 ? 1 : 0;
        }
        if (r.status != keylane::outcome::ok)
          continue;
        ++v.ok;
        if (parked_seen) {
          v.order_kept = false;
          problem(name + " " + describe(r)
                  + " although an earlier event of it was parked");
        }
        if (!r.accepted || r.balance != balances[a].at(r.index)) {
          v.order_kept = false;
          problem(name + " #" + std::to_string(r.index) + " left balance "
                  + std::to_string(r.balance)
                  + (r.accepted ? "" : " (rejected by the ledger rules)")
                  + ", in order it leaves "
                  + std::to_string(balances[a].at(r.index)));
        }
      }
    }
  }
  if (obs.measured.violations != 0 || obs.measured.business_errors != 0) {
    v.order_kept = false;
    problem("the handler applied " + std::to_string(obs.measured.violations)
            + " events after a later one of their account, and the ledger "
              "rules rejected "
            + std::to_string(obs.measured.business_errors));
  }

  // The accounts without faults: every event ok at the first attempt.
  for (uint32_t a = 0; a < obs.first_pass.size(); ++a) {
    if (a == spec.transient_account || a == bad)
      continue;
    for (const auto& r : obs.first_pass[a])
      if (r.status != keylane::outcome::ok || r.attempts != 1) {
        v.other_accounts_ok = false;
        problem(w.names[a] + " " + describe(r)
                + ", expected ok at the first attempt");
        break;
      }
    if (obs.first_pass[a].size() != w.events_per_account[a])
      v.other_accounts_ok = false;
  }

  // The transient fault: retried, then ok, at the head of its lane.
  bool hinted = false;
  for (const auto& r : obs.first_pass.at(spec.transient_account)) {
    uint32_t want = r.index == spec.transient_index
                      ? spec.transient_failures + 1
                      : 1;
    if (r.status != keylane::outcome::ok || r.attempts != want) {
      // The likely cause, said once.
      std::string hint;
      if (!hinted && spec.transient_failures + 1 > obs.cfg.max_attempts)
        hint = " (retry.max_attempts = "
               + std::to_string(obs.cfg.max_attempts)
               + " is too few for the injected failures)";
      hinted = hinted || !hint.empty();
      problem(w.names[spec.transient_account] + " " + describe(r)
              + ", expected ok after " + std::to_string(want) + " attempt"
              + (want == 1 ? "" : "s") + hint);
    }
  }
  std::map<uint32_t, uint64_t> want_retried{
    {spec.transient_account, spec.transient_failures}};
  if (v.retried != want_retried) {
    std::vector<std::pair<std::string, uint64_t>> got;
    for (const auto& [a, n] : v.retried)
      got.emplace_back(w.names[a], n);
    problem("retries per account were " + render(got) + ", expected {"
            + w.names[spec.transient_account] + ": "
            + std::to_string(spec.transient_failures) + "}");
  }

  // The permanent fault: the event and every later one of its account
  // parked, in order, and listed as submitted.
  for (const auto& r : obs.first_pass.at(bad)) {
    auto want = r.index < bad_first ? keylane::outcome::ok
                                    : keylane::outcome::parked;
    if (r.status != want)
      problem(w.names[bad] + " " + describe(r) + ", expected "
              + keylane::to_string(want));
  }
  for (const auto& k : obs.parked_before)
    v.parked.emplace_back(k.k.to_string(), k.count);
  std::vector<std::pair<std::string, uint64_t>> want_parked{
    {w.names[bad], bad_last - bad_first}};
  if (v.parked != want_parked)
    problem("parked_keys() listed " + render(v.parked) + ", expected "
            + render(want_parked)
            + (obs.cfg.park == keylane::park_mode::none
                 ? " (park.store = \"none\" parks nothing)"
                 : ""));
  auto submitted = events_of(w, bad);
  submitted.erase(submitted.begin(), submitted.begin() + bad_first);
  v.parked_list_matches = obs.parked_list.size() == submitted.size();
  for (size_t i = 0; v.parked_list_matches && i < submitted.size(); ++i)
    v.parked_list_matches = same_event(obs.parked_list[i], submitted[i]);
  if (!v.parked_list_matches)
    problem("parked_events(\"" + w.names[bad] + "\") listed "
            + std::to_string(obs.parked_list.size())
            + " events that are not its submitted events #"
            + std::to_string(bad_first) + " to #"
            + std::to_string(bad_last - 1) + " in order");

  // The replay: exactly the parked events, ok, in order; then nothing
  // parked.
  v.replayed = obs.replayed;
  if (obs.replayed != bad_last - bad_first) {
    v.replayed_in_order = false;
    problem("replay(\"" + w.names[bad] + "\") resubmitted "
            + std::to_string(obs.replayed) + " events, expected "
            + std::to_string(bad_last - bad_first));
  }
  for (uint32_t a = 0; a < obs.replay_pass.size(); ++a) {
    const auto& out = obs.replay_pass[a];
    bool good = a == bad ? in_sequence(out, bad_first, bad_last)
                         : out.empty();
    for (const auto& r : out)
      good = good && r.status == keylane::outcome::ok;
    if (!good) {
      v.replayed_in_order = false;
      problem("the replay put out " + indices(out) + " of " + w.names[a]
              + (out.empty() ? "" : ", first " + describe(out.front()))
              + (a == bad ? "" : ", which was not replayed"));
    }
  }
  v.store_empty_after_replay = obs.parked_after.empty();
  if (!v.store_empty_after_replay) {
    std::vector<std::pair<std::string, uint64_t>> left;
    for (const auto& k : obs.parked_after)
      left.emplace_back(k.k.to_string(), k.count);
    problem("after the replay parked_keys() still listed " + render(left));
  }

  // The runtime's own counters agree with the outputs.
  auto counter = [&](const char* what, uint64_t got, uint64_t want) {
    if (got != want)
      problem(std::string{"stats()."} + what + " = " + std::to_string(got)
              + ", the outputs say " + std::to_string(want));
  };
  uint64_t retries = 0;
  for (const auto& [a, n] : v.retried)
    retries += n;
  counter("ok", obs.stats.ok, v.ok);
  counter("parked", obs.stats.parked, all_tombstones);
  counter("replayed", obs.stats.replayed, obs.replayed);
  counter("retries", obs.stats.retries, retries);
  return v;
}

} // namespace ledger
