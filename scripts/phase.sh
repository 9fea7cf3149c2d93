#!/usr/bin/env bash
# Runs a command as one named phase of a longer job and, when
# KEYLANE_PHASE_LOG names a file, appends "<seconds>\t<status>\t<name>" to it,
# so .ci/run can print where its time went even when a phase fails.
#
#   scripts/phase.sh "plain build" cmake --build build -j2
#   scripts/phase.sh --record NAME STARTED STATUS   logs a phase run elsewhere
#                                      (STARTED: its `date +%s`)
#   scripts/phase.sh --table FILE      prints the phases FILE holds
set -uo pipefail

# Logs phase $1, begun at $2 (epoch seconds), that ended with status $3.
record() {
  [[ -n ${KEYLANE_PHASE_LOG:-} ]] || return 0
  local result=ok
  (($3 == 0)) || result="failed ($3)"
  printf '%d\t%s\t%s\n' $(($(date +%s) - $2)) "$result" "$1" >>"$KEYLANE_PHASE_LOG"
}

if [[ ${1:-} == --record ]]; then
  record "${2:?usage: phase.sh --record NAME STARTED STATUS}" "${3:?}" "${4:?}"
  exit 0
fi

if [[ ${1:-} == --table ]]; then
  file=${2:?usage: phase.sh --table FILE}
  [[ -s $file ]] || exit 0
  total=0
  printf '%-28s %8s  %s\n' phase seconds status
  while IFS=$'\t' read -r secs status name; do
    printf '%-28s %8d  %s\n' "$name" "$secs" "$status"
    total=$((total + secs))
  done <"$file"
  printf '%-28s %8d  (%d min %02d s)\n' "total" "$total" $((total / 60)) $((total % 60))
  exit 0
fi

name=${1:?usage: phase.sh NAME COMMAND [ARGS...]}
shift
started=$(date +%s)
"$@"
status=$?
record "$name" "$started" "$status"
exit "$status"
