#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ (only the keylane
# library and tests/fuzz/, under ASan + UBSan, -O2 with line tables only:
# reports keep file and line) and runs each for
# FUZZ_SECONDS (default 60) on a copy of its seed corpus in
# tests/fuzz/corpus/<target>/. Fails on the first crash, leak, sanitizer
# report or failed check; the input is kept as
# build-fuzz/artifacts/<target>-crash-*, to be added to the corpus with a
# regression test once fixed.
#
# Targets run FUZZ_PARALLEL at a time (default JOBS): each fuzzer is one
# process on one core, so two cores run two targets for the same seconds.
#
#   bash tests/fuzz/run.sh                  every target
#   bash tests/fuzz/run.sh config_parse     some targets
#   FUZZ_SECONDS=600 bash tests/fuzz/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-2}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-$JOBS}
phase=(bash scripts/phase.sh)
# The compiler cache as the Makefile uses it (NO_CCACHE=1: none).
launcher=
if [[ -z ${NO_CCACHE:-} ]] && command -v ccache >/dev/null 2>&1; then
  launcher=$(command -v ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
ALL=(config_parse config_round_trip config_override spill_record park_payload
     park_store)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")

started=$(date +%s)
CXX=${CXX:-clang++} cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKEYLANE_BUILD_FUZZ=ON -DKEYLANE_BUILD_TESTS=OFF \
  -DKEYLANE_BUILD_EXAMPLES=OFF -DKEYLANE_BUILD_BENCH=OFF \
  -DKEYLANE_BUILD_KAFKA=OFF -DKEYLANE_USE_MIMALLOC=OFF \
  -DKEYLANE_SANITIZERS=address,undefined \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
"${phase[@]}" "fuzz build" cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]/#/fuzz_}"
built=$(date +%s)
echo "fuzz: built in $((built - started)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$BUILD/artifacts"

# One target's run; its verdict is its exit status, its output its log.
fuzz_one() {
  local t=$1 seeds=tests/fuzz/corpus/$1 work=$BUILD/corpus/$1 max_len=4096
  mkdir -p "$work" # new inputs go here, not into the source tree
  [[ $t != park_store ]] || max_len=16384 # whole SQLite files of 512-byte pages
  "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" \
    -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/$t-" "$work" "$seeds" \
    >"$BUILD/$t.log" 2>&1
}

# Reports one finished target; on its failure stops the others (run_all's
# `running`) and fails the script.
report() {
  local t=$1 status=$2
  if ((status != 0)); then
    local r
    for r in "${running[@]}"; do kill "${r%% *}" 2>/dev/null || true; done
    tail -n 60 "$BUILD/$t.log"
    echo "fuzz: $t FAILED; the input is in $BUILD/artifacts/ (log: $BUILD/$t.log)" >&2
    exit 1
  fi
  echo "fuzz: $t: $(grep -E '^stat::(number_of_executed_units|new_units_added)' \
    "$BUILD/$t.log" | tr '\n' ' ')"
}

run_all() {
  local -a running=() # "pid target"
  local i=0
  while ((i < ${#targets[@]} || ${#running[@]} > 0)); do
    while ((i < ${#targets[@]} && ${#running[@]} < FUZZ_PARALLEL)); do
      echo "fuzz: ${targets[i]} for ${FUZZ_SECONDS} s"
      fuzz_one "${targets[i]}" &
      running+=("$! ${targets[i]}")
      i=$((i + 1))
    done
    # Wait for the oldest; targets of one round take the same seconds.
    local pid=${running[0]%% *} t=${running[0]#* } status=0
    wait "$pid" || status=$?
    running=("${running[@]:1}")
    report "$t" "$status"
  done
}
runs_started=$(date +%s)
status=0
(run_all) || status=$?
"${phase[@]}" --record "fuzz runs" "$runs_started" "$status"
((status == 0)) || exit "$status"
echo "fuzz: ${#targets[@]} targets passed; $(( $(date +%s) - started )) s in all"
