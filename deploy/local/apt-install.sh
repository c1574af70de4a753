#!/usr/bin/env bash
# apt-install.sh [--update] PACKAGE...: installs Debian packages for .ci/run. While another apt or
# dpkg holds the package lock (an unattended upgrade, a second install) it waits, at most
# DPKG_LOCK_WAIT_SECONDS (default 600), instead of failing at once as apt-get does.
set -euo pipefail
wait_seconds=${DPKG_LOCK_WAIT_SECONDS:-600}

apt_get() {
  local deadline=$((SECONDS + wait_seconds)) out
  while :; do
    # DPkg::Lock::Timeout makes apt itself wait for the dpkg lock; the loop also covers the lists lock.
    if out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=5 "$@" 2>&1); then
      return 0
    fi
    if grep -qiE 'could not get lock|unable to (acquire|lock)' <<<"$out" && ((SECONDS < deadline)); then
      echo "apt-install: waiting for the package lock ($(grep -m1 -iE 'lock' <<<"$out"))" >&2
      sleep 2
      continue
    fi
    echo "$out" >&2
    return 1
  done
}

if [ "${1:-}" = "--update" ]; then
  shift
  apt_get update -qq
fi
apt_get install -y -qq "$@" > /dev/null
