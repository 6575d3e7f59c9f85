# syntax=docker/dockerfile:1

# Gristmill: one image for the API and the Temporal workers.
#
#   docker build -t gristmill .
#   docker run ... gristmill                                         # API + every worker (dist/bin/start.js)
#   docker run ... gristmill node dist/bin/api.js                    # API only
#   docker run ... gristmill node dist/bin/worker.js --queues indexing   # workers for some queues
#
# The image runs no PostgreSQL and no Temporal of its own: set DATABASE_URL and TEMPORAL_ADDRESS
# (docker-compose.yml does). See docs/deploy.md.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- deps: every dependency, dev tools included, for the build --------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --no-audit --no-fund

# ---- build: TypeScript -> dist/, the prebuilt workflow bundle (dist/workflow-bundle.js) and the web app (dist/web) --
FROM deps AS build
COPY . .
RUN npm run build \
 && test -f dist/bin/start.js \
 && test -f dist/workflow-bundle.js \
 && test -f dist/web/index.html

# ---- prod-deps: runtime dependencies only ---------------------------------------------------------------
# embedded-postgres is a runtime dependency but stays idle because DATABASE_URL is always set here.
# The Temporal core bridge ships native builds for every platform; only the Linux ones can load here.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@temporalio/core-bridge/releases/*-apple-darwin \
           node_modules/@temporalio/core-bridge/releases/*-windows-* \
           node_modules/@ffmpeg-installer

# ---- runtime ----------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

# git: documentation indexing clones repositories; ffmpeg and yt-dlp: transcription; tini: PID 1 that
# forwards SIGTERM to node (which then drains the workers) and reaps the children git/ffmpeg leave.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git ffmpeg yt-dlp tini \
 && rm -rf /var/lib/apt/lists/*

# MALLOC_MMAP_THRESHOLD_: glibc's allocator then maps every block of 128 KiB or more on its own and returns it when
# freed, instead of raising that threshold as blocks are freed and keeping them; a replica's keyword indexes are
# loaded and dropped in such blocks (bench/README.md, "Scale": RSS 359 -> 258 MB at 1M snippets).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    MALLOC_MMAP_THRESHOLD_=131072

WORKDIR /app
# Application files stay owned by root: the node user can read them, not change them.
COPY --from=prod-deps /app/node_modules ./node_modules
# dist/web is the web interface the API serves at / (built above; the image has no esbuild).
COPY --from=build /app/dist ./dist
# package.json is needed at run time: its "type": "module" makes node load dist/**/*.js as ES modules.
COPY package.json ./

# The only writable place. A named volume mounted here starts out owned by node (uid 1000).
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]

USER node
EXPOSE 3000

# /healthz checks PostgreSQL and Temporal (200 or 503). Worker-only containers serve no HTTP: disable the
# check for them (docker-compose.yml does; `docker run --no-healthcheck` otherwise).
HEALTHCHECK --interval=30s --timeout=15s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(12000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/bin/start.js"]
