# Image for the api and worker services of temporal-dev.yml.
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts
ENV NODE_ENV=production
# node itself is PID 1's command, so SIGTERM reaches it and the API and worker drain (npm would not pass it on).
CMD ["node", "dist/bin/api.js"]
