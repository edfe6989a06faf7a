# Switchyard API image (used by docker-compose.yml).
FROM node:22-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps ./apps
COPY packages ./packages
COPY examples ./examples
RUN npm ci --omit=dev --no-audit --no-fund
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
EXPOSE 8080
CMD ["npm", "start"]
