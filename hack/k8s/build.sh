#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler and etcd from
# the Go module proxy into a per-version cache directory, printing progress
# while it runs. (kwok, for simulated nodes, is built by hack/kwok/build.sh.)
# Usage: build.sh [OUT_DIR]   (default: $BUNDLESMITH_CACHE/<k8s>-etcd-<etcd>-<go.sum hash>)
# Prints the output directory as its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
k8s_version=$(cat K8S_VERSION)
etcd_version=$(cat ETCD_VERSION)
sum_hash=$(cat go.mod go.sum cmd/*/main.go | sha256sum | cut -c1-12)
cache_root=${BUNDLESMITH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bundlesmith}
out=${1:-$cache_root/${k8s_version}-etcd-${etcd_version}-${sum_hash}}
mkdir -p "$out"
log="$out/build.log"

# The checksum database is not reachable from the machines this project runs
# on; go.sum is committed and `go` verifies every downloaded module against it
# (-mod=readonly refuses any module not already listed there).
export GOSUMDB=off GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0

minor=${k8s_version#v1.}; minor=${minor%%.*}
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${k8s_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${build_date} -X ${pkg}.gitCommit=module-${k8s_version}"
done

# shellcheck source=../go-build.sh
. "$here/../go-build.sh"

# kube-scheduler is built from upstream's own main package: it needs no module
# beyond those the other three already pull in (6 more packages of
# k8s.io/kubernetes), so go.mod/go.sum, and with them the cache key, are the
# same with or without it and an existing cache directory only gains it. If a
# version bump ever makes it need a module the others do not, -mod=readonly
# fails here naming it: then add a cmd/kube-scheduler/main.go and run go mod tidy.
package_of() {
  case "$1" in
    kube-scheduler) echo k8s.io/kubernetes/cmd/kube-scheduler ;;
    *) echo "./cmd/$1" ;;
  esac
}

for bin in etcd kube-apiserver kube-controller-manager kube-scheduler; do
  if [ -x "$out/$bin" ]; then
    echo "[control-plane build] ${bin}: cached in ${out}" >&2
    continue
  fi
  echo "[control-plane build] building ${bin} (${k8s_version}, etcd ${etcd_version}); a cold build takes several minutes on 2 cores; log: ${log}" >&2
  go_build "control-plane build" "$out" "$bin" "$(package_of "$bin")" "$ldflags" "$log" hack/k8s/go.mod || exit 1
done
echo "$out"
