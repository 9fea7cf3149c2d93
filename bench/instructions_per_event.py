#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Counts the instructions one way spends per event, under valgrind's
callgrind (Debian's `valgrind`), and prints the total and the functions
that spend the most, per event.

    bench/instructions_per_event.py BENCH WAY WORKLOAD [TOP] [-- BENCH_ARGS...]

Timing on a shared 2-core VM drifts by more than a change of a few percent;
instruction counts do not (about 1 % from run to run). Callgrind runs the
threads one at a time, so what depends on concurrency (batch sizes, how
often a lane retires under the cap) differs from a real run: compare
builds and ways with it, and take times from ab-bench. The total leaves out
the process's start (the dynamic loader, the workload's generation, the
calibration), which no event pays; the benchmark's own per-event code
(its submit loop, its output callback) stays in, alike for every way.
Example (docs/performance.md):

    bench/instructions_per_event.py build-rel/bench/keylane_bench \\
      keylane_global uniform_16 30
"""
import os
import re
import subprocess
import sys
import tempfile

# Start-up and benchmark set-up, not per-event work.
SETUP = ("memset", "calibrate_work", "dl-", "_dl_", "do_lookup",
         "make_workload", "mersenne", "generate_canonical", "peak_reset")


def main(argv):
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    if len(argv) < 4:
        sys.exit(__doc__)
    bench, way, workload = argv[1:4]
    top = int(argv[4]) if len(argv) > 4 else 25
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
               bench, "--no-plots", "--results", tmp, "--ways", way,
               "--workloads", workload, "--work", "0", "--schedulers",
               "sharing", "--no-sysalloc", "--runs", "1", "--events", "20000",
               "--latency-seconds", "0.001"] + extra
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(out):
            sys.exit("valgrind failed:\n" + run.stderr[-2000:])
        events = count_calls(out, r"::submit\(keylane::bench::item const&\)$")
        if events == 0:
            sys.exit("found no submit calls of the benchmark's way")
        report = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                                capture_output=True, text=True).stdout
    rows = []
    for line in report.split("\n"):
        m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if not m or "PROGRAM TOTALS" in m.group(2):
            continue
        if any(s in m.group(2) for s in SETUP):
            continue
        rows.append((int(m.group(1).replace(",", "")), m.group(2)))
    total = sum(n for n, _ in rows)
    print(f"{way} {workload}: {events} events, {total / events:.0f} "
          "instructions per event")
    for n, name in rows[:top]:
        print(f"{n / events:8.1f}  {name[:120]}")


def count_calls(path, pattern):
    """Calls of the functions whose name matches `pattern`."""
    names, calls, callee = {}, 0, None
    with open(path) as f:
        for line in f:
            m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                if name:
                    names[ident] = name
                callee = ident if kind == "cfn" else None
                continue
            m = re.match(r"^calls=(\d+)", line)
            if m and callee is not None:
                if re.search(pattern, names.get(callee, "")):
                    calls += int(m.group(1))
                callee = None
    return calls


if __name__ == "__main__":
    main(sys.argv)
