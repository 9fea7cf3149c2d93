# SPDX-License-Identifier: Apache-2.0
# Sourced by the exchange's test scripts: start and stop one server at a
# time. The caller sets $exchange (the server binary) and $work (its
# directory) and defines fail().
#
# start_server TAG ARGS...: the server on a free loopback port (a few
# random ones are tried; a busy port makes the server exit 3) with --json
# and ARGS; its files are $work/TAG.*, its pid $server, its port $port.
server=""
start_server() {
  local tag=$1
  shift
  server=""
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    "$exchange" --port "$port" --json "$@" >"$work/$tag.out" 2>"$work/$tag.log" &
    server=$!
    for _ in $(seq 100); do
      grep -q "acceptor up" "$work/$tag.log" && break
      kill -0 "$server" 2>/dev/null || break
      sleep 0.1
    done
    grep -q "acceptor up" "$work/$tag.log" && break
    # Not up: it may still be starting; never wait on a live server.
    kill -9 "$server" 2>/dev/null || true
    wait "$server" || true
    server=""
  done
  [ -n "$server" ] || fail "the server did not start"
  trap 'kill -9 "$server" 2>/dev/null || true' EXIT
}

# stop_server: SIGTERM, and the server must exit 0.
stop_server() {
  kill -TERM "$server"
  wait "$server" || fail "the server did not stop cleanly"
  trap - EXIT
}
