#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in build-fuzz/ (only the keylane
# library and tests/fuzz/, under ASan + UBSan) and runs each for
# FUZZ_SECONDS (default 60) on a copy of its seed corpus in
# tests/fuzz/corpus/<target>/. Fails on the first crash, leak, sanitizer
# report or failed check; the input is kept as
# build-fuzz/artifacts/<target>-crash-*, to be added to the corpus with a
# regression test once fixed.
#
#   bash tests/fuzz/run.sh                  every target
#   bash tests/fuzz/run.sh config_parse     some targets
#   FUZZ_SECONDS=600 bash tests/fuzz/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-2}
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
  -DKEYLANE_SANITIZERS=address,undefined >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]/#/fuzz_}"
built=$(date +%s)
echo "fuzz: built in $((built - started)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mkdir -p "$BUILD/artifacts"
for t in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$t
  work=$BUILD/corpus/$t # new inputs go here, not into the source tree
  mkdir -p "$work"
  max_len=4096
  [[ $t != park_store ]] || max_len=16384 # whole SQLite files of 512-byte pages
  echo "fuzz: $t for ${FUZZ_SECONDS} s"
  if ! "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECONDS" \
         -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="$BUILD/artifacts/$t-" "$work" "$seeds" \
         >"$BUILD/$t.log" 2>&1; then
    tail -n 60 "$BUILD/$t.log"
    echo "fuzz: $t FAILED; the input is in $BUILD/artifacts/ (log: $BUILD/$t.log)" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)' "$BUILD/$t.log" \
    | tr '\n' ' '
  echo
done
echo "fuzz: ${#targets[@]} targets passed; $(( $(date +%s) - started )) s in all"
