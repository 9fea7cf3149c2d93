# SPDX-License-Identifier: Apache-2.0
# The envelope of a result file (bench/record.sh, bench/record_run.sh):
# where its rows come from. Sourced; the caller sets `build_dir` first.
#
#   envelope_begin               before the run: commit, date, load, ...
#   envelope_end                 after it: wall time and load
#   envelope_fields CMD STATUS   the envelope's JSON fields, one a line

str() { # a JSON string literal
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  printf '"%s"' "$s"
}
cpuinfo() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" 2>/dev/null | head -n 1; }

envelope_begin() {
  commit=$(git rev-parse HEAD)
  dirty=false
  [[ -z $(git status --porcelain --untracked-files=no) ]] || dirty=true
  local compiler
  compiler=$(cache CMAKE_CXX_COMPILER)
  compiler_version=$("$compiler" --version 2>/dev/null | head -n 1 || true)
  os=$(sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p' /etc/os-release 2>/dev/null || true)
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  load_start=$(cut -d ' ' -f 1-3 /proc/loadavg)
  start=$(date +%s)
}

envelope_end() {
  wall=$(($(date +%s) - start))
  load_end=$(cut -d ' ' -f 1-3 /proc/loadavg)
}

envelope_fields() { # command status
  echo "  \"command\": $(str "$1"),"
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
  echo "  \"status\": $2,"
}
