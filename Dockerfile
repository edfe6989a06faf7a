# Switchyard API image (used by docker-compose.yml for the API and the MCP bridge).
FROM node:22-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps ./apps
COPY packages ./packages
COPY examples ./examples
RUN npm ci --omit=dev --no-audit --no-fund
# The code stays root-owned (read-only to the service); only the data directory belongs to the
# unprivileged `node` user (uid 1000) the service runs as. A new named volume mounted at /data
# takes this ownership; a volume made by an older root image needs a one-off
#   docker compose run --rm --user root api chown -R node:node /data
RUN mkdir -p /data && chown node:node /data
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
USER node
EXPOSE 8080
CMD ["npm", "start"]
