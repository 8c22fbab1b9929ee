#!/usr/bin/env bash
# Finds, or installs from Debian's packages, what the image test pushes and
# pulls the image with: skopeo (the client the README's push instructions
# use) and docker-registry (the CNCF distribution registry, served on
# loopback for the test). CI machines start fresh, so the packages are
# installed here (apt-get update first), as root or through sudo, as
# hack/lua/install.sh does. Prints the two paths, skopeo first, as its last
# two lines.
set -euo pipefail
missing=()
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[image] ${missing[*]} not found: installing Debian's packages" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
      echo "[image] not root and no sudo: install ${missing[*]} (apt-get install ${missing[*]}) and run again" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  # The package's service is not wanted (the test runs its own registry on loopback); without an init system it does not start anyway.
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
command -v skopeo
command -v docker-registry
