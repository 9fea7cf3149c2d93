#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs keylane_bench --json once and writes a result file that the docs'
# tables are rendered from (bench/render_tables.cmake): keylane_bench's rows
# inside an envelope saying where they come from — machine, commit, build,
# command, date, load average and wall time.
#
#   bench/record.sh OUT.json [keylane_bench options...]
#
# Run from the repository root after `make bench` built the binary
# (BENCH_BIN, default build/bench/keylane_bench; the build's type is read
# from its CMakeCache.txt). The rows go to OUT.json even when the benchmark
# fails, and the script then exits with its status.
set -euo pipefail

if [[ $# -lt 1 || $1 == -* ]]; then
  echo "usage: bench/record.sh OUT.json [keylane_bench options...]" >&2
  exit 2
fi
out=$1
shift
bin=${BENCH_BIN:-build/bench/keylane_bench}
build_dir=$(dirname "$(dirname "$bin")")
if [[ ! -x $bin ]]; then
  echo "bench/record.sh: $bin not built (make bench builds it)" >&2
  exit 2
fi

# shellcheck source=bench/envelope.sh
source "$(dirname "${BASH_SOURCE[0]}")/envelope.sh"
envelope_begin

rows=$(mktemp)
log=$(mktemp)
trap 'rm -f "$rows" "$log"' EXIT
status=0
"$bin" --json "$@" >"$rows" 2> >(tee "$log" >&2) || status=$?
envelope_end

mkdir -p "$(dirname "$out")"
{
  echo "{"
  envelope_fields "keylane_bench --json $*" "$status"
  echo "  \"rows\": $(cat "$rows")"
  echo "}"
} >"$out"
echo "bench/record.sh: wrote $out (status $status, ${wall} s)" >&2
exit "$status"
