// SPDX-License-Identifier: Apache-2.0
#pragma once

// Checks of one run against the model.

#include "parking_harness.hpp"

namespace parking_support {

// -- the checks ---------------------------------------------------------------

// Checks one run against the model: outputs, lane order, attempts, backoff
// lower bounds, the park store and the stats. Returns the backoff gaps seen.
inline std::vector<backoff_gap> check_phase(harness& h, const phase& ph) {
  auto& sc = h.sc;
  const auto& cfg = sc.cfg;
  auto max_attempts = static_cast<uint32_t>(cfg.max_attempts);
  auto log = h.log.snapshot();
  problems outs, reasons, order, attempts, parking;

  // Exactly once, as the model says.
  std::map<uint64_t, size_t> seen;
  std::set<uint64_t> seqs_out; // every seq this runtime put out
  for (size_t i = 0; i < ph.log_begin && i < log.size(); ++i)
    seqs_out.insert(log[i].seq);
  for (size_t i = ph.log_begin; i < log.size(); ++i) {
    auto& o = log[i];
    auto it = ph.expect.find(o.id);
    if (it == ph.expect.end()) {
      outs.add("id ", o.id, " (seq ", o.seq, ") came out but was not sent");
      continue;
    }
    if (++seen[o.id] > 1) {
      outs.add("id ", o.id, " came out ", seen[o.id], " times");
      continue;
    }
    auto& e = it->second;
    auto p = sc.table.get(o.id);
    if (o.status != e.status)
      outs.add("id ", o.id, " key ", o.key_id, ": ", to_string(o.status),
               " (error \"", o.error, "\", attempts ", o.attempts,
               "), expected ", to_string(e.status));
    if (o.attempts != e.attempts)
      attempts.add("id ", o.id, " key ", o.key_id, ": ", o.attempts,
                   " attempts, expected ", e.attempts, " (", to_string(o.status),
                   ", plan failures ", p.failures, ")");
    if (o.result && *o.result == stale_result(o.id))
      outs.add("id ", o.id, ": a late completion's result came out");
    else if (o.status == outcome::ok
             && (!o.result || *o.result != o.id * 7 + o.key_id))
      outs.add("id ", o.id, ": wrong or missing result");
    else if (o.status != outcome::ok && o.result)
      outs.add("id ", o.id, ": ", to_string(o.status), " with a result ",
               *o.result);
    if (o.status == e.status
        && (o.status == outcome::parked || o.status == outcome::failed)) {
      auto why = reason_problem(p, o.id, e, max_attempts, o.error);
      if (!why.empty())
        reasons.add("id ", o.id, ": reason \"", o.error, "\": ", why);
    }
    // A replayed event runs under a new seq; every seq comes out once.
    if (ph.replayed.count(o.id) == 0 && o.seq != sc.submit_seq.at(o.id))
      outs.add("id ", o.id, ": seq ", o.seq, ", submit returned ",
               sc.submit_seq.at(o.id));
    if (!seqs_out.insert(o.seq).second)
      outs.add("seq ", o.seq, " came out twice (the second time id ", o.id,
               ")");
    if (o.status == outcome::parked)
      sc.parked_history[o.id].push_back(o);
  }
  for (auto& [id, e] : ph.expect)
    if (seen.count(id) == 0)
      outs.add("id ", id, " never came out (expected ", to_string(e.status),
               ")");
  CHECK(log.size() - ph.log_begin == ph.expect.size());

  // Output order: per key always, globally in seq order.
  if (cfg.order != order_mode::none) {
    std::vector<std::vector<uint64_t>> ids(sc.keys);
    std::vector<std::vector<uint64_t>> seqs(sc.keys);
    for (size_t i = ph.log_begin; i < log.size(); ++i) {
      ids[log[i].key_id].push_back(log[i].id);
      seqs[log[i].key_id].push_back(log[i].seq);
    }
    for (uint32_t k = 0; k < sc.keys; ++k) {
      if (ids[k] != ph.order[k])
        order.add("key ", k, ": outputs in another order than submitted");
      if (!std::is_sorted(seqs[k].begin(), seqs[k].end()))
        order.add("key ", k, ": output seqs not rising");
    }
  }
  if (cfg.order == order_mode::global)
    for (size_t i = 0; i < log.size(); ++i)
      if (log[i].seq != i) {
        order.add("global order: output #", i, " has seq ", log[i].seq);
        break;
      }

  // Handler attempts: per key exactly the planned attempts of the events
  // that were not parked behind, in lane order, one at a time.
  std::vector<backoff_gap> gaps;
  for (uint32_t k = 0; k < sc.keys; ++k) {
    std::vector<std::pair<uint64_t, uint32_t>> want;
    for (auto id : ph.order[k]) {
      auto& e = ph.expect.at(id);
      for (uint32_t a = 1; a <= e.attempts; ++a)
        want.emplace_back(id, a);
    }
    auto recs = h.jr.of(k);
    std::vector<std::pair<uint64_t, uint32_t>> got;
    for (auto& r : recs)
      got.emplace_back(r.id, r.attempt);
    if (got != want) {
      size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i])
        ++i;
      std::ostringstream at;
      if (i < got.size())
        at << "ran id " << got[i].first << " attempt " << got[i].second;
      else
        at << "ran nothing";
      if (i < want.size())
        at << ", expected id " << want[i].first << " attempt "
           << want[i].second;
      else
        at << ", expected nothing more";
      attempts.add("key ", k, ": handler attempt #", i, " ", at.str());
    }
    for (size_t i = 0; i + 1 < recs.size(); ++i) {
      auto& r = recs[i];
      auto& next = recs[i + 1];
      if (next.id != r.id || !r.failed)
        continue;
      backoff_gap g{r.id, r.attempt,
                    std::chrono::duration<double, std::milli>(next.start
                                                              - r.failed_at),
                    backoff_cap(cfg, r.attempt)};
      gaps.push_back(g);
      // Lower bounds only: a timer never fires early. A hang's failed_at
      // is the earliest moment of its timeout.
      auto floor = cfg.jitter == jitter_mode::none
                     ? g.cap
                     : std::chrono::duration<double, std::milli>(0);
      if (g.gap < floor)
        attempts.add("id ", r.id, ": attempt ", r.attempt + 1, " started ",
                     g.gap.count(), " ms after attempt ", r.attempt,
                     " failed, below ", floor.count(), " ms");
    }
  }
  CHECK(h.jr.overlaps() == 0);

  // The park store holds exactly the model's parked lists, in order, each
  // record as its latest tombstone described it.
  auto keys = h.rt->parked_keys();
  REQUIRE(keys);
  std::map<uint32_t, parked_key> summary;
  for (size_t i = 1; i < keys->size(); ++i)
    if ((*keys)[i].parked_at < (*keys)[i - 1].parked_at)
      parking.add("parked_keys not ordered by first parked time at #", i);
  for (auto& pk : *keys) {
    uint32_t k = 0;
    bool found = false;
    for (uint32_t j = 0; j < sc.keys; ++j)
      if (sc.key_of(j) == pk.k) {
        k = j;
        found = true;
      }
    if (!found || !summary.emplace(k, pk).second)
      parking.add("parked_keys lists ", pk.k, found ? " twice" : " (unknown)");
  }
  for (uint32_t k = 0; k < sc.keys; ++k) {
    auto& want = sc.m.parked(k);
    auto evs = h.rt->parked_events(sc.key_of(k));
    if (!evs) {
      parking.add("parked_events(", k, ") failed: ", render(evs.error()));
      continue;
    }
    std::vector<uint64_t> got;
    for (auto& pe : *evs)
      got.push_back(pe.payload.id);
    if (got != want) {
      std::ostringstream g, w;
      for (auto x : got)
        g << x << ' ';
      for (auto x : want)
        w << x << ' ';
      parking.add("key ", k, ": parked ids [", g.str(), "], expected [",
                  w.str(), "]");
      continue;
    }
    for (size_t i = 0; i < evs->size(); ++i) {
      auto& pe = (*evs)[i];
      if (pe.k != sc.key_of(k) || pe.payload.key_id != k)
        parking.add("key ", k, ": record of id ", pe.payload.id,
                    " has the wrong key");
      if (i > 0 && !((*evs)[i - 1].id < pe.id))
        parking.add("key ", k, ": store ids not rising");
      if (i > 0 && pe.parked_at < (*evs)[i - 1].parked_at)
        parking.add("key ", k, ": parked_at not rising");
      auto hist = sc.parked_history.find(pe.payload.id);
      if (hist == sc.parked_history.end()) {
        parking.add("id ", pe.payload.id, " is parked without a tombstone");
        continue;
      }
      // The record describes one of the times the event was parked (its
      // seq is that of the run that parked it). When it was last parked for
      // a failure of its own (it ran again in a replay and failed for good
      // again), reason and attempts are that failure's: "the last failure".
      auto& ts = hist->second;
      auto& last = ts.back();
      auto same = [&pe](const output& t) {
        return pe.seq == t.seq && pe.reason == t.error
               && pe.attempts == t.attempts;
      };
      auto why_same = [&pe](const output& t) {
        return pe.reason == t.error && pe.attempts == t.attempts;
      };
      bool fits = std::any_of(ts.begin(), ts.end(), same);
      if (last.attempts > 0)
        fits = why_same(last)
               && std::any_of(ts.begin(), ts.end(), [&pe](const output& t) {
                    return t.seq == pe.seq;
                  });
      if (!fits)
        parking.add("id ", pe.payload.id, ": record (seq ", pe.seq,
                    ", reason \"", pe.reason, "\", attempts ", pe.attempts,
                    ") fits none of its ", ts.size(),
                    " tombstone(s); the last: seq ", last.seq, ", \"",
                    last.error, "\", ", last.attempts, " attempts");
    }
    auto s = summary.find(k);
    if (want.empty()) {
      if (s != summary.end())
        parking.add("key ", k, " is in parked_keys with nothing parked");
      continue;
    }
    if (s == summary.end()) {
      parking.add("key ", k, " has ", want.size(),
                  " parked events but is not in parked_keys");
      continue;
    }
    if (s->second.count != want.size())
      parking.add("key ", k, ": parked_keys count ", s->second.count,
                  ", expected ", want.size());
    if (s->second.first_reason != evs->front().reason)
      parking.add("key ", k, ": first_reason \"", s->second.first_reason,
                  "\", first record \"", evs->front().reason, "\"");
    if (s->second.parked_at != evs->front().parked_at)
      parking.add("key ", k, ": parked_at differs from its first record");
  }

  // Stats over the whole life of this runtime.
  auto st = h.rt->stats();
  uint64_t ok = 0, skipped = 0, failed = 0, parked = 0, retries = 0;
  for (auto& o : log) {
    ok += o.status == outcome::ok;
    skipped += o.status == outcome::skipped;
    failed += o.status == outcome::failed;
    parked += o.status == outcome::parked;
    retries += o.attempts > 1 ? o.attempts - 1 : 0;
  }
  CHECK(st.delivered == log.size());
  CHECK(st.ok == ok);
  CHECK(st.skipped == skipped);
  CHECK(st.failed == failed);
  CHECK(st.parked == parked);
  CHECK(st.retries == retries);
  CHECK(st.replayed == h.replayed);
  // A replayed event is accepted again, under a new seq, and delivered
  // again: `accepted` counts it, so accepted == delivered after a drain.
  CHECK(st.accepted == h.submitted() + h.replayed);

  CHECK_NO_PROBLEMS(outs);
  CHECK_NO_PROBLEMS(reasons);
  CHECK_NO_PROBLEMS(order);
  CHECK_NO_PROBLEMS(attempts);
  CHECK_NO_PROBLEMS(parking);
  h.jr.clear();
  return gaps;
}

// Submits `lists`, drains, checks; the model learns the run. Returns the
// backoff gaps.
inline std::vector<backoff_gap> run_phase(harness& h,
                                   const std::vector<std::vector<item>>& lists) {
  auto& sc = h.sc;
  phase ph{sc.keys};
  ph.log_begin = h.log.size();
  size_t n = 0;
  for (auto& l : lists)
    n += l.size();
  h.submit(lists);
  h.drain(ph.log_begin + n);
  auto order = by_key_in_seq_order(sc, lists);
  for (uint32_t k = 0; k < sc.keys; ++k)
    sc.m.run(k, order[k], ph);
  return check_phase(h, ph);
}


} // namespace parking_support
