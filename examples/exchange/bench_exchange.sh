#!/usr/bin/env bash
# The exchange benchmark: the same seeded FIX order flow through both
# matchers (`--matcher keylane | single`), alternating, at each rate, with
# and without the risk check, several runs each; prints one JSON line per
# run and a table of medians (docs/exchange.md).
#
#   bench_exchange.sh [--build DIR] [--rates 5000,20000] [--runs 3]
#                     [--duration 10] [--risk on,off] [--matchers keylane,single]
#                     [--sessions 8] [-- EXTRA SERVER ARGS]
set -euo pipefail
build=build rates=5000,20000 runs=3 duration=10 risks=on,off
matchers=keylane,single sessions=8 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --risk) risks=$2; shift 2 ;;
    --matchers) matchers=$2; shift 2 ;;
    --sessions) sessions=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "bench_exchange: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
dir=$build/examples/exchange
[ -x "$dir/exchange" ] && [ -x "$dir/fix/order_entry_load" ] \
  || { echo "bench_exchange: build $dir/exchange and order_entry_load first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(date -u +%FT%TZ)"

field() { grep -o "\"$1\":[0-9.]*" "$2" | head -1 | cut -d: -f2; }

one_run() { # matcher risk rate run
  local m=$1 risk=$2 rate=$3 run=$4 args=() port server
  [ "$risk" = off ] && args+=(--no-risk)
  for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    "$dir/exchange" --matcher "$m" --port "$port" --json "${args[@]}" "${extra[@]}" \
      >"$out/server.json" 2>"$out/server.log" &
    server=$!
    for _ in $(seq 100); do
      grep -q "acceptor up" "$out/server.log" && break
      kill -0 $server 2>/dev/null || break
      sleep 0.1
    done
    grep -q "acceptor up" "$out/server.log" && break
    # Not up: it may still be starting; never wait on a live server.
    kill -9 $server 2>/dev/null || true
    wait $server || true
    server=""
  done
  [ -n "$server" ] || { echo "bench_exchange: the server did not start" >&2; cat "$out/server.log" >&2; exit 1; }
  "$dir/fix/order_entry_load" --port "$port" --rate "$rate" --duration "$duration" \
    --sessions "$sessions" --json >"$out/load.json" 2>"$out/load.log" || true
  local cpu
  cpu=$(awk '{print ($14+$15)/100}' /proc/$server/stat)
  kill -TERM $server
  wait $server || true
  local sent
  sent=$(field sent "$out/load.json")
  printf '{"matcher":"%s","risk":"%s","rate":%s,"run":%s,"server_cpu_s":%s,"server_cpu_us_per_order":%.1f,"load":%s}\n' \
    "$m" "$risk" "$rate" "$run" "$cpu" "$(awk -v c="$cpu" -v n="${sent:-1}" 'BEGIN { print c * 1000000 / (n > 0 ? n : 1) }')" \
    "$(cat "$out/load.json")" | tee -a "$out/all.jsonl"
}

IFS=, read -ra rate_list <<<"$rates"
IFS=, read -ra risk_list <<<"$risks"
IFS=, read -ra matcher_list <<<"$matchers"
for risk in "${risk_list[@]}"; do
  for rate in "${rate_list[@]}"; do
    for run in $(seq "$runs"); do
      for m in "${matcher_list[@]}"; do
        one_run "$m" "$risk" "$rate" "$run"
      done
    done
  done
done

# Medians (and the range over runs) per matcher, risk and rate.
echo
printf '%-8s %-5s %7s %11s %9s %9s %10s %12s %7s\n' matcher risk rate "orders/s" "p50 us" "p99 us" "p99.9 us" "p99 range" "cpu us"
for risk in "${risk_list[@]}"; do
  for rate in "${rate_list[@]}"; do
    for m in "${matcher_list[@]}"; do
      grep "\"matcher\":\"$m\",\"risk\":\"$risk\",\"rate\":$rate," "$out/all.jsonl" | awk -v m="$m" -v risk="$risk" -v rate="$rate" '
        function val(s, k,   r) { if (match(s, "\"" k "\":[0-9.]+")) { r = substr(s, RSTART, RLENGTH); sub(/.*:/, "", r); return r + 0 } return -1 }
        function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        { n++; ops[n] = val($0, "orders_per_s"); p50[n] = val($0, "p50"); p99[n] = val($0, "p99"); p999[n] = val($0, "p999"); cpu[n] = val($0, "server_cpu_us_per_order")
          lo = (n == 1 || p99[n] < lo) ? p99[n] : lo; hi = (n == 1 || p99[n] > hi) ? p99[n] : hi }
        END { if (n) printf "%-8s %-5s %7d %11.0f %9.0f %9.0f %10.0f %5.0f-%-6.0f %7.1f\n", m, risk, rate, median(ops, n), median(p50, n), median(p99, n), median(p999, n), lo, hi, median(cpu, n) }'
    done
  done
done
