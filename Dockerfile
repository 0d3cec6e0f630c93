# One image for the three commands: the API by default, the worker with the same heap flags and
# dist/src/main/worker.js, and the one-shot migrations, dist/src/main/migrate.js, run before both
# as the owner role (docker-compose.yml). The flags are src/main/node-flags.ts's.
#
# Node.js 24, the active LTS (20 reached its end of life), pinned to an exact release. To pin the
# image itself, take the index digest of this tag — `docker buildx imagetools inspect
# node:24.20.0-bookworm-slim` prints it (`Digest: sha256:…`) — and set
# NODE_IMAGE=node:24.20.0-bookworm-slim@sha256:… here (or `--build-arg`); see README, Production.
ARG NODE_IMAGE=node:24.20.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK (sdk/typescript) is a workspace of the root: npm ci needs its manifest.
COPY sdk/typescript/package.json ./sdk/typescript/
# patch-package applies patches/ after install (postgres.js: a close racing a queued write).
COPY patches ./patches
RUN npm ci
COPY . .
# Compiles TypeScript and prebuilds the workflow bundle, so workers do not bundle at start.
RUN npm run build

FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/typescript/package.json ./sdk/typescript/
COPY patches ./patches
RUN npm ci --omit=dev

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=runtime-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY drizzle ./drizzle
# The reference's examples (recorded from a real run; src/http/examples/examples.ts reads them).
COPY src/http/examples/partner.json ./src/http/examples/partner.json
# Documents and contracts live in the object store (S3_*); this folder serves only FILE_STORE=local.
RUN mkdir -p /var/lib/embedded-credit/uploads && chown -R node:node /var/lib/embedded-credit
ENV UPLOADS_DIR=/var/lib/embedded-credit/uploads
USER node
EXPOSE 3000
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=25", "dist/src/main/api.js"]
