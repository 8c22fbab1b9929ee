# Sourced by hack/k8s/build.sh and hack/kwok/build.sh: one `go build` into a
# cache directory, with a progress line every 30 s (so a long cold build is
# not mistaken for a hang) and the build log's tail on failure.
# go_build TAG OUT BIN PACKAGE LDFLAGS LOG GO_MOD
#   builds PACKAGE to OUT/BIN (via OUT/BIN.tmp, so a cut build is never taken
#   for a cached one); TAG prefixes every message; GO_MOD is named in the hint.
go_build() {
  local tag=$1 out=$2 bin=$3 package=$4 ldflags=$5 log=$6 gomod=$7
  local started pid ticker
  started=$(date +%s)
  go build -ldflags "$ldflags" -o "$out/$bin.tmp" "$package" >>"$log" 2>&1 &
  pid=$!
  (
    while kill -0 "$pid" 2>/dev/null; do
      sleep 30
      kill -0 "$pid" 2>/dev/null || break
      echo "[$tag] still building ${bin}: $(( $(date +%s) - started ))s elapsed (log: ${log})" >&2
    done
  ) &
  ticker=$!
  if ! wait "$pid"; then
    kill "$ticker" 2>/dev/null || true
    echo "[$tag] FAILED building ${bin} after $(( $(date +%s) - started ))s. Last lines of ${log}:" >&2
    tail -n 40 "$log" >&2
    echo "[$tag] Check that the Go module proxy is reachable and 'go version' is >= the go directive in ${gomod}, then run again." >&2
    return 1
  fi
  kill "$ticker" 2>/dev/null || true
  mv "$out/$bin.tmp" "$out/$bin"
  echo "[$tag] ${bin} done in $(( $(date +%s) - started ))s" >&2
}
