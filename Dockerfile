# The image of both the API and the worker (docker-compose.yml picks the command).
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
# Workflow code is bundled once here, not at every worker start.
RUN npm run bundle-workflows \
 && mkdir -p /var/lib/fetchplane \
 && chown -R node:node /var/lib/fetchplane /app/.stack

USER node
EXPOSE 8080
CMD ["node", "--import", "tsx", "api/main.ts"]
