# syntax=docker/dockerfile:1
# An alternative build for Docker or BuildKit users. The tested, reproducible
# image is `npm run image` (hack/image/build.ts, docs/operations.md, Image);
# this Dockerfile has never been built here (no Docker engine).
# Node 24 LTS, pinned to the same release as the `node` devDependency.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Build: compile TypeScript to dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the `node` devDependency would download a second Node;
# the image's own Node 24 runs the compiler. `npm install` with the lock
# file, not `npm ci`: the lock file lists only linux-x64's optional native
# bindings (see .ci/run), which `npm ci` rejects as out of sync.
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
# Only src/ is copied, so only dist/src is emitted; a type error fails the build.
RUN node node_modules/typescript/bin/tsc -p tsconfig.json

# Production dependencies only (none has install scripts or native parts).
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime: no npm, no compiler, no shell needed; runs as a fixed non-root uid
# so runAsNonRoot can verify it (the chart runs it with a read-only root filesystem).
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY package.json ./
COPY crds ./crds
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/src/main.js"]
