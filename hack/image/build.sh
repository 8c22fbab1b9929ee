#!/usr/bin/env bash
# npm run image: compiles the project, then builds the operator's image as
# an OCI archive, dist/image/bundlesmith-<version>.oci.tar, without a
# container engine (hack/image/build.ts says how). Extra arguments go to the
# builder (--out DIR). The last line printed is a JSON summary: archive,
# archiveSha256, manifestDigest, version.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run build --silent
exec node dist/hack/image/build.js "$@"
