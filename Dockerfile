# syntax=docker/dockerfile:1
# The production image: build with the dev dependencies, run with the production ones and dist/.
# The bench's peer servers are in neither: bench/package.json installs them when the bench runs.
# The runtime stage is what test/deploy/image.test.mjs performs in a temporary folder.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
COPY scripts/check-patches.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Production dependencies only; postinstall applies patches/ to them (patch-package is one of them)
# and fails the build if one does not apply.
COPY package.json package-lock.json ./
COPY patches ./patches
COPY scripts/check-patches.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
USER node
ENV PORT=4000
EXPOSE 4000
# /healthz answers whatever the Host, so the probe needs no allowed host of its own.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server itself is PID 1 (exec form, no npm or shell in between): SIGTERM reaches it and it drains.
# --no-memory-reducer: a busy server after an idle spell renders at full speed (scripts/lib/node-flags.mjs).
# Traces need no loader flag either: `docker run -e OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318`
# and the origin loads the tracing SDK from node_modules above (docs/observability.md).
CMD ["node", "--no-memory-reducer", "dist/server/server.mjs"]
