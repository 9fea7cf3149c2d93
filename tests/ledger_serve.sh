#!/usr/bin/env bash
# Smoke tests of `ledger --serve` as an operator meets it: started in the
# background, stopped by a signal, its config file edited and reloaded with
# SIGHUP. CTest runs it (tests/examples_smoke.cmake); by hand:
#   bash tests/ledger_serve.sh stop    build/examples/ledger/ledger
#   bash tests/ledger_serve.sh interrupt build/examples/ledger/ledger
#   bash tests/ledger_serve.sh reload  build/examples/ledger/ledger examples/ledger/ledger.toml
# Every wait is on a line in the program's output, bounded by a timeout.

set -u

mode=${1:?usage: ledger_serve.sh stop|interrupt|reload LEDGER [CONFIG]}
ledger=${2:?the ledger executable}
config=${3:-}

dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAILED: $*"
  echo "--- ledger stdout"; cat "$dir/out" 2>/dev/null
  echo "--- ledger stderr"; cat "$dir/err" 2>/dev/null
  exit 1
}

# Waits up to `timeout` seconds for a line of stderr matching `regex` (grep -E).
wait_for() {
  local regex=$1 timeout=${2:-60} waited=0
  until grep -qE -- "$regex" "$dir/err"; do
    kill -0 "$pid" 2>/dev/null || fail "ledger exited before printing /$regex/"
    [ "$waited" -ge $((timeout * 10)) ] && fail "no /$regex/ within $timeout s"
    sleep 0.1
    waited=$((waited + 1))
  done
}

# Sends `signal` and waits up to 30 s for the exit; checks it was status 0.
stop_with() {
  local signal=$1 waited=0
  kill "-$signal" "$pid" || fail "could not send $signal"
  while kill -0 "$pid" 2>/dev/null; do
    [ "$waited" -ge 300 ] && fail "still running 30 s after $signal"
    sleep 0.1
    waited=$((waited + 1))
  done
  wait "$pid"
  local status=$?
  pid=
  [ "$status" -eq 0 ] || fail "exit status $status after $signal, not 0"
  grep -qE -- "ledger: SIG$signal: stopping" "$dir/err" \
    || fail "no 'ledger: SIG$signal: stopping' line"
}

# Fails unless stderr holds exactly `count` lines matching `regex`.
count_is() {
  local regex=$1 count=$2 n
  n=$(grep -cE -- "$regex" "$dir/err")
  [ "$n" -eq "$count" ] || fail "$n lines match /$regex/, expected $count"
}

case $mode in
  stop)
    # The retry scenario is the short one; without --config, SIGHUP has no
    # file to reload and says so.
    "$ledger" --scenario retry --json --serve >"$dir/out" 2>"$dir/err" &
    pid=$!
    wait_for '^ledger: serving; SIGHUP: no --config to reload; SIGINT/SIGTERM to stop$'
    grep -q '"as_expected": true' "$dir/out" || fail "no report before serving"
    kill -HUP "$pid"
    wait_for 'ledger: SIGHUP: no --config file to reload'
    stop_with TERM
    ;;
  interrupt)
    # A script's background job ignores SIGINT unless job control is on;
    # with it on, SIGINT reaches the ledger as Ctrl-C would.
    set -m
    "$ledger" --scenario retry --serve >"$dir/out" 2>"$dir/err" &
    pid=$!
    wait_for '^ledger: serving;'
    grep -q 'result: as expected' "$dir/out" || fail "no report before serving"
    stop_with INT
    ;;
  reload)
    [ -n "$config" ] || fail "reload needs the config file to copy"
    cp "$config" "$dir/ledger.toml"
    # At "info" the runtime itself logs what a reload applied.
    printf '\n[log]\nlevel = "info"\n' >>"$dir/ledger.toml"
    "$ledger" --json --serve --config "$dir/ledger.toml" \
      --set runtime.window=1000 >"$dir/out" 2>"$dir/err" &
    pid=$!
    wait_for "^ledger: serving; SIGHUP reloads $dir/ledger.toml; SIGINT/SIGTERM to stop\$"
    grep -q '"key_lanes"' "$dir/out" || fail "no report before serving"

    # A good edit: the cap applies; the file's window loses to --set.
    sed -i -e 's/^max_active_keys = 8 /max_active_keys = 3 /' \
      -e 's/^window = "unbounded"/window = 500/' "$dir/ledger.toml"
    kill -HUP "$pid"
    wait_for '^keylane info: reload from .*ledger\.toml \+ --set: runtime\.max_active_keys = 8 -> 3$'
    count_is 'max_active_keys = 8 -> 3' 1
    # (The start-up line lists the --set window among the settings that
    # differ from the defaults; no reload line may name it.)
    count_is 'reload from .*runtime\.window' 0

    # A broken edit: refused with the reason, the program keeps serving.
    sed -i 's/^max_active_keys = 3 /max_active_keys = 0 /' "$dir/ledger.toml"
    kill -HUP "$pid"
    wait_for '^ledger: SIGHUP: reload refused, running config kept: .*ledger\.toml:[0-9]+: runtime\.max_active_keys = 0'
    kill -0 "$pid" 2>/dev/null || fail "ledger ended after a refused reload"

    # Fixed again: the running cap was still 3, so only 3 -> 2 shows.
    sed -i 's/^max_active_keys = 0 /max_active_keys = 2 /' "$dir/ledger.toml"
    kill -HUP "$pid"
    wait_for 'runtime\.max_active_keys = 3 -> 2$'
    stop_with TERM
    ;;
  *)
    fail "unknown mode '$mode'"
    ;;
esac
echo "passed: ledger --serve $mode"
