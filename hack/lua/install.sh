#!/usr/bin/env bash
# Finds, or installs from Debian's packages, a Lua 5.1 interpreter: Argo CD
# runs resource health checks with gopher-lua, which is Lua 5.1, and the
# Bundle health check (docs/argocd/bundle-health.lua) is tested under the
# same language version. CI machines start fresh, so the package is
# installed here (apt-get update first), as root or through sudo.
# Prints the interpreter's path as its last line.
set -euo pipefail
if ! command -v lua5.1 >/dev/null 2>&1; then
  echo "[lua] lua5.1 not found: installing Debian's lua5.1 package" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
      echo "[lua] not root and no sudo: install lua5.1 (apt-get install lua5.1) and run again" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends lua5.1 >&2
fi
command -v lua5.1
