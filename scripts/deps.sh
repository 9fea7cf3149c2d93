#!/usr/bin/env bash
# Installs the Debian packages that are missing from the lists named on the
# command line (scripts/packages/<name>.txt: library, ledger, kafka,
# examples, tests, fuzz), or from all of them when none is named:
#
#   scripts/deps.sh                  every list (make test, CI)
#   scripts/deps.sh library ledger   what `make run` needs
#   scripts/deps.sh --print NAME...  print the packages of those lists, install nothing
#
# A no-op (one dpkg query per package, no network) when all are installed;
# runs `apt-get update` only when something has to be installed. As root it
# installs directly, otherwise through sudo when available; failing both it
# names the missing packages and exits 1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lists_dir="${here}/packages"

print=0
if [[ "${1:-}" == "--print" ]]; then
  print=1
  shift
fi
names=("$@")
if ((${#names[@]} == 0)); then
  for f in "${lists_dir}"/*.txt; do
    names+=("$(basename "${f}" .txt)")
  done
fi

packages=()
for name in "${names[@]}"; do
  list="${lists_dir}/${name}.txt"
  if [[ ! -f "${list}" ]]; then
    echo "deps: no package list ${list}" >&2
    echo "deps: lists: $(cd "${lists_dir}" && ls *.txt | sed 's/\.txt$//' | tr '\n' ' ')" >&2
    exit 2
  fi
  while read -r pkg _; do
    [[ -z "${pkg}" || "${pkg}" == \#* ]] && continue
    packages+=("${pkg}")
  done < "${list}"
done

if ((print)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "${pkg}" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("${pkg}")
  fi
done

((${#missing[@]} == 0)) && exit 0

if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && { [[ -t 0 ]] || sudo -n true 2>/dev/null; }; then
  as_root=(sudo)
else
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
log="$(mktemp)"
trap 'rm -f "${log}"' EXIT
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y
     -o DPkg::Lock::Timeout=300)
if ! { "${apt[@]}" update && "${apt[@]}" install --no-install-recommends "${missing[@]}"; } \
     >"${log}" 2>&1; then
  cat "${log}" >&2
  echo "deps: failed to install ${missing[*]}" >&2
  exit 1
fi
