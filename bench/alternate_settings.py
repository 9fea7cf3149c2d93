#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs one keylane_bench binary with several values of one setting, in turn,
several rounds (a noisy machine's drift then falls on every value alike), and
prints a Markdown table of the medians per row and value.

    bench/alternate_settings.py BENCH ROUNDS KEY VALUE[,VALUE...] -- BENCH_ARGS...

VALUE is as in a config file (strings quoted: '"auto"'); "-" runs the
default. Baseline ways (not keylane_*) are listed once, as "base".
Example (docs/performance.md, light-load latency):

    bench/alternate_settings.py build-rel/bench/keylane_bench 5 sink.output_thread \\
      '"consumer"','"auto"','"sink"' -- --ways asio_strand,keylane_none \\
      --workloads hot_key --work 1000 --rate 10000 --latency-seconds 1 \\
      --schedulers sharing --no-sysalloc --runs 1 --events 50000
"""
import collections
import json
import statistics
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 5 or "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    bench, rounds, key, values = argv[1:cut]
    args = argv[cut + 1:]
    rows = collections.defaultdict(list)
    results = tempfile.mkdtemp(prefix="keylane-alternate-")
    for _ in range(int(rounds)):
        for value in values.split(","):
            extra = [] if value == "-" else ["--set", f"{key}={value}"]
            out = subprocess.run([bench, "--json", "--no-plots", "--results", results]
                                 + args + extra, capture_output=True, text=True,
                                 check=True).stdout
            for row in json.loads(out):
                label = value if row["way"].startswith("keylane") else "base"
                # Rows before the "threads" field ran with 2.
                rows[(row["way"], row["workload"], row["work_ns"],
                      row.get("threads", 2), label)].append(row)

    def med(rs, field):
        return statistics.median(r[field] for r in rs)

    print(f"| way | workload | work ns | threads | {key} | events/s | CPU ns/event | p50 µs | p99 µs | p99.9 µs | cs/event |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (way, wl, work, threads, label), rs in sorted(rows.items()):
        print(f"| {way} | {wl} | {work} | {threads} | {label} | {med(rs, 'events_per_s'):.0f} "
              f"| {med(rs, 'cpu_ns_per_event'):.0f} | {med(rs, 'p50_us'):.1f} "
              f"| {med(rs, 'p99_us'):.0f} | {med(rs, 'p999_us'):.0f} "
              f"| {med(rs, 'cs_per_event'):.3f} |")


if __name__ == "__main__":
    main(sys.argv)
