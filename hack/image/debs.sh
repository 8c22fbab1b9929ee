#!/usr/bin/env bash
# Downloads the Debian packages the image's base is made of
# (hack/image/debian-packages) with `apt-get download`, into a cache
# directory keyed by their versions, and prints that directory as its last
# line. The versions are apt's candidates on this machine (Debian's current
# ones for its release): two builds on the same apt state use the same .debs.
# Only the package lists need root: when apt does not know a package yet
# (a fresh machine with empty lists), `apt-get update` runs first, as root or
# through sudo, as hack/lua/install.sh does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t packages < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/debian-packages")
arch=$(dpkg --print-architecture)

candidates() {
  local p v
  for p in "${packages[@]}"; do
    v=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then return 1; fi
    echo "$p=$v"
  done
}

if ! pinned=$(candidates); then
  echo "[image] apt does not know every package of hack/image/debian-packages yet: apt-get update" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
      echo "[image] not root and no sudo: run apt-get update as root and try again" >&2
      exit 1
    fi
  fi
  $sudo apt-get update -qq >&2
  pinned=$(candidates) || { echo "[image] a package of hack/image/debian-packages has no candidate version after apt-get update" >&2; exit 1; }
fi

key=$(printf '%s\n' "$arch" $pinned | sha256sum | cut -c1-12)
cache="${BUNDLESMITH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bundlesmith}/image-debs-$key"
if [ ! -f "$cache/.complete" ]; then
  echo "[image] downloading $(echo $pinned)" >&2
  tmp="$cache.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # As root, apt would fetch as its _apt user, who cannot write here: say
  # that root fetches (apt checks the .debs against its signed lists either way).
  sandbox=()
  if [ "$(id -u)" -eq 0 ]; then sandbox=(-o APT::Sandbox::User=root); fi
  (cd "$tmp" && apt-get download -qq "${sandbox[@]}" $pinned >&2)
  for p in "${packages[@]}"; do
    ls "$tmp/${p}_"*"_"*.deb >/dev/null 2>&1 || { echo "[image] $p was not downloaded" >&2; exit 1; }
  done
  touch "$tmp/.complete"
  rm -rf "$cache"
  mv "$tmp" "$cache"
fi
echo "$cache"
