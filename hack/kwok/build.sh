#!/usr/bin/env bash
# Builds kwok (sigs.k8s.io/kwok, simulated nodes and pods) from the Go module
# proxy into a per-version cache directory, as hack/k8s/build.sh does for the
# control plane. kwok has a module of its own here: its k8s.io dependencies
# (v0.36.1 for kwok v0.8.0) differ from the control plane's, and the control
# plane's module replaces every k8s.io staging module with its own version.
# go.mod names kwok's command in a `tool` directive, so `go mod tidy` keeps it.
# Usage: build.sh [OUT_DIR]   (default: $BUNDLESMITH_CACHE/kwok-<version>-<go.sum hash>)
# Prints the output directory as its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
kwok_version=$(cat KWOK_VERSION)
sum_hash=$(cat KWOK_VERSION go.mod go.sum | sha256sum | cut -c1-12)
cache_root=${BUNDLESMITH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bundlesmith}
out=${1:-$cache_root/kwok-${kwok_version}-${sum_hash}}
mkdir -p "$out"
log="$out/build.log"

if ! grep -q "sigs.k8s.io/kwok ${kwok_version} " go.mod; then
  echo "[kwok build] go.mod does not require sigs.k8s.io/kwok ${kwok_version} (KWOK_VERSION); run: GOFLAGS=-mod=mod GOSUMDB=off go get sigs.k8s.io/kwok@${kwok_version} && go mod tidy" >&2
  exit 1
fi

# As for the control plane: the checksum database is not reachable here;
# go.sum is committed and -mod=readonly refuses any module not listed there.
export GOSUMDB=off GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0

if [ -x "$out/kwok" ]; then
  echo "[kwok build] kwok: cached in ${out}" >&2
  echo "$out"
  exit 0
fi

echo "[kwok build] building kwok ${kwok_version}; a cold build takes a few minutes on 2 cores; log: ${log}" >&2
# shellcheck source=../go-build.sh
. "$here/../go-build.sh"
go_build "kwok build" "$out" kwok sigs.k8s.io/kwok/cmd/kwok "-s -w" "$log" hack/kwok/go.mod || exit 1
echo "$out"
