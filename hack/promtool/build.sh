#!/usr/bin/env bash
# Builds promtool (Prometheus' rule checker and rule unit-test runner) from
# the Go module proxy into a per-version cache directory, printing progress
# while it runs, as hack/k8s/build.sh builds the control plane. The chart's
# monitoring test runs `promtool check rules` and `promtool test rules` on
# the PrometheusRule the chart renders.
# Prometheus 3.x is published as Go module versions v0.3xx.y (3.16.0 is
# v0.316.0): PROMETHEUS_VERSION holds the module version.
# Usage: build.sh [OUT_DIR]   (default: $BUNDLESMITH_CACHE/promtool-<version>)
# Prints the output directory as its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=$(cat "$here/PROMETHEUS_VERSION")
cache_root=${BUNDLESMITH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bundlesmith}
out=${1:-$cache_root/promtool-${version}}
mkdir -p "$out"
log="$out/build.log"

# One build at a time per cache directory (parallel test runs, several
# checkouts): a second caller waits here, then finds the binary cached.
exec 9>"$out/.lock"
flock 9

if [ -x "$out/promtool" ]; then
  echo "[promtool build] promtool: cached in ${out}" >&2
  echo "$out"
  exit 0
fi

# The checksum database is not reachable from the machines this project runs
# on (as for the control plane); `go install pkg@version` builds with the
# module's own go.mod and go.sum, which pin and check every dependency.
export GOSUMDB=off GOFLAGS="-trimpath" CGO_ENABLED=0
# A GOBIN of our own: go install writes there, then the binary is moved into
# the cache directory only once complete (never a half-written cached binary).
export GOBIN="$out/.gobin"
mkdir -p "$GOBIN"

echo "[promtool build] building promtool (prometheus ${version}); a cold build takes a few minutes on 2 cores; log: ${log}" >&2
started=$(date +%s)
go install -ldflags "-s -w -X github.com/prometheus/common/version.Version=${version}" "github.com/prometheus/prometheus/cmd/promtool@${version}" >>"$log" 2>&1 &
pid=$!
(
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null || break
    echo "[promtool build] still building promtool: $(( $(date +%s) - started ))s elapsed (log: ${log})" >&2
  done
) &
ticker=$!
if ! wait "$pid"; then
  kill "$ticker" 2>/dev/null || true
  echo "[promtool build] FAILED building promtool after $(( $(date +%s) - started ))s. Last lines of ${log}:" >&2
  tail -n 40 "$log" >&2
  echo "[promtool build] Check that the Go module proxy is reachable and serves github.com/prometheus/prometheus ${version}, then run again." >&2
  exit 1
fi
kill "$ticker" 2>/dev/null || true
mv "$GOBIN/promtool" "$out/promtool"
rmdir "$GOBIN" 2>/dev/null || true
echo "[promtool build] promtool done in $(( $(date +%s) - started ))s" >&2
echo "$out"
