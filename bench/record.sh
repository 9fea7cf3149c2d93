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

# A JSON string literal.
str() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
cpuinfo() { # the first value of a /proc/cpuinfo field
  sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n 1
}
cache() { # a value of the build's CMakeCache.txt
  sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" 2>/dev/null | head -n 1
}

commit=$(git rev-parse HEAD)
dirty=false
[[ -z $(git status --porcelain --untracked-files=no) ]] || dirty=true
compiler=$(cache CMAKE_CXX_COMPILER)
compiler_version=$("$compiler" --version 2>/dev/null | head -n 1 || true)
os=$(sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p' /etc/os-release 2>/dev/null || true)
command="keylane_bench --json $*"
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
start=$(date +%s)

rows=$(mktemp)
log=$(mktemp)
trap 'rm -f "$rows" "$log"' EXIT
status=0
"$bin" --json "$@" >"$rows" 2> >(tee "$log" >&2) || status=$?
wall=$(($(date +%s) - start))
load_end=$(cut -d ' ' -f 1-3 /proc/loadavg)

mkdir -p "$(dirname "$out")"
{
  echo "{"
  echo "  \"command\": $(str "$command"),"
  echo "  \"commit\": $(str "$commit"),"
  echo "  \"dirty\": $dirty,"
  echo "  \"build_type\": $(str "$(cache CMAKE_BUILD_TYPE)"),"
  echo "  \"compiler\": $(str "$compiler_version"),"
  echo "  \"date\": $(str "$date"),"
  echo "  \"machine\": {"
  echo "    \"cpu\": $(str "$(cpuinfo 'model name')"),"
  echo "    \"cpu_family\": $(str "$(cpuinfo 'cpu family')"),"
  echo "    \"cpu_model\": $(str "$(cpuinfo model)"),"
  echo "    \"cpu_mhz\": $(str "$(cpuinfo 'cpu MHz')"),"
  echo "    \"cores\": $(nproc),"
  echo "    \"kernel\": $(str "$(uname -r)"),"
  echo "    \"os\": $(str "$os")"
  echo "  },"
  echo "  \"load_average_start\": $(str "$load_start"),"
  echo "  \"load_average_end\": $(str "$load_end"),"
  echo "  \"wall_s\": $wall,"
  echo "  \"status\": $status,"
  echo "  \"rows\": $(cat "$rows")"
  echo "}"
} >"$out"
echo "bench/record.sh: wrote $out (status $status, ${wall} s)" >&2
exit "$status"
