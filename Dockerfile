# One image for the API and the worker (the command differs), built from the lock file.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "api/server.ts"]
