#!/usr/bin/env bash
# Runs a command as one named phase of a longer job and, when
# KEYLANE_PHASE_LOG names a file, appends "<seconds>\t<status>\t<name>" to it,
# so .ci/run can print where its time went even when a phase fails.
#
#   scripts/phase.sh "plain build" cmake --build build -j2
#   scripts/phase.sh --table FILE      prints the phases FILE holds
set -uo pipefail

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
if [[ -n ${KEYLANE_PHASE_LOG:-} ]]; then
  result=ok
  ((status == 0)) || result="failed ($status)"
  printf '%d\t%s\t%s\n' $(($(date +%s) - started)) "$result" "$name" >>"$KEYLANE_PHASE_LOG"
fi
exit "$status"
