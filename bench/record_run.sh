#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the examples' and the Kafka benchmarks (whatever prints JSON objects,
# one a line, on stdout) and writes a result file that the docs' tables are
# rendered from (bench/render_tables.cmake), in the envelope bench/record.sh
# gives keylane_bench's rows: machine, commit, build, command, date, load
# average and wall time.
#
#   bench/record_run.sh OUT.json KIND LABEL='COMMAND' [LABEL='COMMAND'...]
#
# KIND names what ran (exchange, game_rooms, kafka; the renderer picks its
# tables by it). Each COMMAND runs with bash from the repository root, one
# after the other; its stdout lines that start with `{` are kept, in order,
# as that command's "lines" (`rows` holds one entry per command: label,
# command, status, lines). The build's type is read from BUILD_DIR's
# CMakeCache.txt (default build). Exits non-zero if a command did.
set -euo pipefail

if [[ $# -lt 3 || $1 == -* ]]; then
  echo "usage: bench/record_run.sh OUT.json KIND LABEL='COMMAND' [LABEL='COMMAND'...]" >&2
  exit 2
fi
out=$1 kind=$2
shift 2
build_dir=${BUILD_DIR:-build}

# shellcheck source=bench/envelope.sh
source "$(dirname "${BASH_SOURCE[0]}")/envelope.sh"
envelope_begin

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commands="" status=0 i=0
for arg in "$@"; do
  label=${arg%%=*} cmd=${arg#*=}
  commands+="${commands:+$'\n'}$cmd"
  s=0
  bash -c "$cmd" >"$tmp/out.$i" || s=$?
  [[ $s -eq 0 ]] || status=$s
  {
    echo "    {\"label\": $(str "$label"), \"command\": $(str "$cmd"), \"status\": $s, \"lines\": ["
    grep '^{' "$tmp/out.$i" | sed -e 's/^/      /' -e '$!s/$/,/' || true
    echo "    ]}"
  } >"$tmp/row.$i"
  i=$((i + 1))
done
envelope_end

mkdir -p "$(dirname "$out")"
{
  echo "{"
  echo "  \"kind\": $(str "$kind"),"
  envelope_fields "$commands" "$status"
  echo "  \"rows\": ["
  for ((j = 0; j < i; j++)); do
    cat "$tmp/row.$j"
    [[ $j -eq $((i - 1)) ]] || echo "    ,"
  done
  echo "  ]"
  echo "}"
} >"$out"
echo "bench/record_run.sh: wrote $out (status $status, ${wall} s)" >&2
exit "$status"
