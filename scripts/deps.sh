#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/packages.txt that are missing.
# A no-op (one dpkg query per package, no network) when all are installed; runs
# `apt-get update` only when something has to be installed. As root it installs
# directly, otherwise through sudo when available; failing both it names the
# missing packages and exits 1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
list="${here}/packages.txt"

missing=()
while read -r pkg _; do
  [[ -z "${pkg}" || "${pkg}" == \#* ]] && continue
  if ! dpkg -s "${pkg}" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("${pkg}")
  fi
done < "${list}"

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
