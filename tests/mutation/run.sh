#!/usr/bin/env bash
# The mutation check (`make mutation-check`): plants each bug of
# tests/mutation/*.mut, one at a time, in a scratch copy of the tree, builds
# keylane_tests there and expects the suite to fail by itself within a bound.
# A developer command, not run in CI (one build and suite run per mutation);
# run it before resolving an issue that changes the event path.
#
#   tests/mutation/run.sh [MUTATION.mut ...]     default: all of them
#
# Environment:
#   KEYLANE_MUTATION_DIR    scratch directory (default: build-mutation/)
#   KEYLANE_MUTATION_BOUND  seconds a mutated suite may run (default 300)
#   KEYLANE_MUTATION_SPEC   Catch test spec for mutations without tags:
#                           (default: the whole default suite)
#   KEYLANE_WATCHDOG_S      the tests' own watchdog (default 30 here)
#   JOBS                    build jobs (default 2)
#
# Verdicts: caught (the suite failed by itself; the failing tests and their
# times are listed), missed (it passed), hang (the bound killed it: not
# caught, the suite must fail with a message instead), stale (the mutation
# no longer applies: update it), no-build (the mutated tree does not
# compile: update it). Exit status 0 only if every mutation was caught.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="${KEYLANE_MUTATION_DIR:-$root/build-mutation}"
tree="$scratch/tree"
build="$tree/build"
logs="$scratch/logs"
bound="${KEYLANE_MUTATION_BOUND:-300}"
default_spec="${KEYLANE_MUTATION_SPEC:-}"
jobs="${JOBS:-2}"
export KEYLANE_WATCHDOG_S="${KEYLANE_WATCHDOG_S:-30}"
py="$(command -v python3)"

if command -v ccache >/dev/null 2>&1; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  # The scratch tree is rebuilt file by file; the compiler cache makes
  # restoring a file after its mutation a cache hit.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$scratch}"
  # Debug info would otherwise put the build directory into every hash.
  export CCACHE_NOHASHDIR=1
fi

mutations=("$@")
if [ ${#mutations[@]} -eq 0 ]; then
  mutations=("$here"/*.mut)
fi

say() { echo "mutation-check: $*"; }

# The working tree as it is (tracked and new files, without build output),
# copied over the scratch tree; tar keeps modification times, so a rerun
# rebuilds only what changed since.
copy_tree() {
  mkdir -p "$tree" "$logs"
  (cd "$root" && git ls-files -co --exclude-standard -z \
     | tar --null -T - -cf -) | (cd "$tree" && tar -xf -)
  # The last mutation of an earlier run was restored after its build, and
  # tar just gave the file back its older time: make would keep the
  # mutant's objects in the baseline. Every file a mutation plants in is
  # compiled afresh (a compiler-cache hit).
  local m f
  for m in "$here"/*.mut; do
    f="$(sed -n 's/^file: //p' "$m")"
    if [ -n "$f" ] && [ -f "$tree/$f" ]; then touch "$tree/$f"; fi
  done
}

build_tests() {
  cmake --build "$build" -j"$jobs" --target keylane_tests > "$1" 2>&1
}

# Runs a Catch spec with the bound; prints "rc seconds".
run_suite() { # spec junit-file console-file
  local spec="$1" start end rc=0
  local -a args=()
  [ -n "$spec" ] && args=("$spec")
  start=$(date +%s.%N)
  (cd "$build/tests" && timeout -k 10 "$bound" ./keylane_tests "${args[@]}" \
     -r junit -o "$2" > "$3" 2>&1) || rc=$?
  end=$(date +%s.%N)
  echo "$rc $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')"
}

# The failing test cases of a JUnit file, each with its time and first message.
failures() {
  "$py" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as et
try:
    root = et.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit(0)
for tc in root.iter("testcase"):
    bad = tc.find("failure")
    if bad is None:
        bad = tc.find("error")
    if bad is None:
        continue
    # The assertion and its expansion: the lines between FAILED: and the
    # INFO messages / location, in one line.
    lines = [l.strip() for l in (bad.text or bad.get("message") or "").splitlines()]
    lines = [l for l in lines if l and l != "FAILED:" and l != "with expansion:"]
    what = " | ".join(l for l in lines[:2])
    print(f"    {tc.get('name')} ({float(tc.get('time') or 0):.1f} s): {what[:200]}")
EOF
}

say "scratch tree $tree, bound ${bound}s, watchdog ${KEYLANE_WATCHDOG_S}s"
copy_tree
cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKEYLANE_BUILD_TESTS=ON -DKEYLANE_BUILD_BENCH=OFF > "$logs/configure.log" 2>&1 \
  || { say "configure failed, see $logs/configure.log"; exit 2; }

# The unmutated suite must pass with every spec used, or nothing is learnt.
say "baseline build"
build_tests "$logs/baseline-build.log" \
  || { say "baseline does not build, see $logs/baseline-build.log"; exit 2; }
declare -A specs=()
for m in "${mutations[@]}"; do
  s="$("$py" "$here/apply.py" --tags "$m")"
  specs["${s:-$default_spec}"]=1
done
for s in "${!specs[@]}"; do
  read -r rc secs < <(run_suite "$s" "$logs/baseline.xml" "$logs/baseline.out")
  if [ "$rc" != 0 ]; then
    say "baseline '${s:-<all>}' fails (rc $rc, ${secs}s): fix the suite first"
    failures "$logs/baseline.xml"
    exit 2
  fi
  say "baseline '${s:-<all>}' passes in ${secs}s"
done

declare -a summary=()
caught=0 counted=0 broken=0
for m in "${mutations[@]}"; do
  name="$(basename "$m" .mut)"
  spec="$("$py" "$here/apply.py" --tags "$m")"
  spec="${spec:-$default_spec}"
  file="$(sed -n 's/^file: //p' "$m")"
  echo
  say "$name: $("$py" "$here/apply.py" --describe "$m")"
  if ! out="$("$py" "$here/apply.py" "$m" "$tree")"; then
    say "$name: STALE: update it ($out)"
    summary+=("$name STALE: update it")
    broken=$((broken + 1))
    continue
  fi
  verdict=""
  if ! build_tests "$logs/$name-build.log"; then
    say "$name: NO-BUILD: update it, see $logs/$name-build.log"
    summary+=("$name NO-BUILD: update it")
    broken=$((broken + 1))
  else
    read -r rc secs < <(run_suite "$spec" "$logs/$name.xml" "$logs/$name.out")
    counted=$((counted + 1))
    if [ "$rc" = 0 ]; then
      verdict="missed (suite passed in ${secs}s)"
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      verdict="hang (killed at the ${bound}s bound: not caught)"
    else
      caught=$((caught + 1))
      verdict="caught in ${secs}s (rc $rc)"
    fi
    say "$name: $verdict"
    failures "$logs/$name.xml"
    # A watchdog or the per-case timer says what it waited for.
    grep -h -m 2 '^watchdog:\|still running after' "$logs/$name.out" \
      | cut -c1-300 | sed 's/^/    /' || true
    if [ "$rc" != 0 ] && ! grep -q '<failure\|<error' "$logs/$name.xml" 2>/dev/null; then
      echo "    (no report: the binary died; last lines of its output)"
      tail -n 5 "$logs/$name.out" | sed 's/^/    /'
    fi
    summary+=("$name $verdict")
  fi
  # Back to the pristine file (a new mtime; the compiler cache hits).
  cp "$root/$file" "$tree/$file"
done

echo
say "summary (spec: ${default_spec:-whole suite} unless a mutation names tags)"
for line in "${summary[@]}"; do echo "  $line"; done
say "score: $caught of $counted caught; $broken stale or not building"
[ "$caught" = "$counted" ] && [ "$broken" = 0 ]
