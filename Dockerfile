# The image of both the API and the worker (docker-compose.yml picks the command). It runs the
# compiled JavaScript (`npm run build`, tsconfig.build.json), not the TypeScript sources.

# Build: every dependency (TypeScript included), then the compiler's output in dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium-headless-shell fonts-liberation fonts-noto-core ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production \
    CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell \
    STACK_DIR=/app/.stack \
    DATA_DIR=/var/lib/fetchplane

COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund

COPY . .
COPY --from=build /app/dist ./dist
# Workflow code is bundled once here, not at every worker start (from the workflow sources, which the
# worker hashes to find the bundle).
RUN node dist/workers/bundle.js \
 && mkdir -p /var/lib/fetchplane \
 && chown -R node:node /var/lib/fetchplane /app/.stack

USER node
EXPOSE 8080
CMD ["node", "dist/api/main.js"]
