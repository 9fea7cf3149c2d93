#!/usr/bin/env bash
# The exchange's CTest run of its connection limits: a server with its
# default limits, then connections that try to make it keep what it should
# not (order_entry_load --check-limits: BodyLength=999999999 followed by
# 64 MiB, 32 MiB with no 8=, 200 connections that never log on), alone and
# then beside a normal load flow.
#
#   limits_test.sh EXCHANGE ORDER_ENTRY_LOAD WORKDIR
#
# Fails unless every one of those connections is dropped in time, the
# server's peak RSS grows by less than 32 MiB and its CPU by less than 2 s
# over them, every order of the flow beside them is answered, and the
# server stops cleanly and counts the drops.
set -euo pipefail
exchange=$1 load=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "exchange limits: $*" >&2; for f in "$work"/*.log; do echo "--- $f"; cat "$f"; done >&2; exit 1; }

. "$(dirname "${BASH_SOURCE[0]}")/server_control.sh"
start_server server

hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$server/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
field() { grep -o "\"$1\":[0-9.]*" "$2" | head -1 | cut -d: -f2; }

hwm0=$(hwm_kib) cpu0=$(cpu_ticks)
why=()
"$load" --port "$port" --check-limits >"$work/limits.out" 2>"$work/limits.log" \
  || why+=("a connection the server must drop was kept or dropped late")
cat "$work/limits.out"
kill -0 "$server" 2>/dev/null || fail "the server died"
hwm1=$(hwm_kib) cpu1=$(cpu_ticks)
hz=$(getconf CLK_TCK)
grown=$(( (hwm1 - hwm0) / 1024 ))
cpu_ms=$(( (cpu1 - cpu0) * 1000 / hz ))
echo "server peak RSS grew by $grown MiB (from $((hwm0 / 1024)) MiB), CPU $cpu_ms ms"
[ "$grown" -lt 32 ] || why+=("peak RSS grew by $grown MiB")
[ "$cpu_ms" -lt 2000 ] || why+=("the server spent $cpu_ms ms of CPU on them")
[ ${#why[@]} -eq 0 ] || fail "$(IFS=';'; echo "${why[*]}")"

# The same beside a normal flow: every order answered.
"$load" --port "$port" --check-limits >"$work/limits2.out" 2>"$work/limits2.log" &
limits_pid=$!
"$load" --port "$port" --rate 1000 --duration 3 --seed 7 --json \
  >"$work/load.out" 2>"$work/load.log" || fail "order_entry_load failed beside them"
wait "$limits_pid" || { cat "$work/limits2.out"; fail "a connection beside the flow was kept"; }
cat "$work/load.out"
sent=$(field sent "$work/load.out")
[ "${sent:-0}" -gt 2000 ] || fail "only ${sent:-0} orders sent"
[ "$(field answered "$work/load.out")" = "$sent" ] || fail "not every order answered"
for f in unanswered out_of_sequence session_errors; do
  [ "$(field $f "$work/load.out")" = 0 ] || fail "$f is not 0"
done

stop_server
cat "$work/server.out"
[ "$(field oversized_cut "$work/server.out")" -ge 2 ] || fail "oversized_cut < 2"
[ "$(field logon_timeout_cut "$work/server.out")" -ge 400 ] || fail "logon_timeout_cut < 400"
[ "$(field pre_logon_cut "$work/server.out")" -ge 2 ] || fail "pre_logon_cut < 2"

# A client that logs on and never reads, with no session outboxes to hold
# its reports back: dropped once 64 KiB are unread, the flow beside it
# answered in full. A small kernel send buffer, so what the client leaves
# unread reaches the server's own buffer after a few hundred reports
# rather than after megabytes.
sed '/^\[DEFAULT\]/a SocketSendBufferSize=4096' "$(dirname "$exchange")/exchange.fix.cfg" \
  >"$work/small-sndbuf.fix.cfg"
start_server unread-server --session-queue 0 --max-unsent-bytes 65536 \
  --fix-config "$work/small-sndbuf.fix.cfg"
"$load" --port "$port" --rate 1000 --duration 2 --seed 8 --json --slow-reader 50000 \
  >"$work/unread-load.out" 2>"$work/unread-load.log" \
  || fail "order_entry_load failed beside a client that does not read"
cat "$work/unread-load.out"
sent=$(field sent "$work/unread-load.out")
[ "$(field answered "$work/unread-load.out")" = "$sent" ] \
  || fail "not every order answered beside the client that does not read"
stop_server
cat "$work/unread-server.out"
[ "$(field unread_cut "$work/unread-server.out")" -ge 1 ] \
  || fail "the client that does not read was not dropped"
echo "exchange limits: ok"
