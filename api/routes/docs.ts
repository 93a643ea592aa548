// GET /openapi.json and GET /docs. The docs page is Swagger UI served from the
// swagger-ui-dist package's own files, so it works with no CDN or internet.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import { defineRoute } from '../contract/route.ts';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Governed Workspace Service API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });</script>
</body>
</html>`;

function loadAssets(): Map<string, Buffer> {
  const dir = getAbsoluteFSPath();
  return new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(path.join(dir, name))]));
}

export function docsRoutes(getDocument: () => Record<string, unknown>) {
  let assets: Map<string, Buffer> | undefined;
  return [
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1.0 document',
      tags: ['meta'],
      auth: 'none',
      responses: { 200: { description: 'The machine-readable contract (OpenAPI 3.1.0, version "current").' } },
      handler: () => ({ status: 200, body: getDocument() }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'getDocs',
      summary: 'Interactive API documentation',
      tags: ['meta'],
      auth: 'none',
      responses: { 200: { description: 'Swagger UI rendering /openapi.json.', contentType: 'text/html' } },
      handler: () => ({ status: 200, body: PAGE, headers: { 'Content-Type': 'text/html; charset=utf-8' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs/assets/{file}',
      operationId: 'getDocsAsset',
      summary: 'Static asset of the docs page',
      tags: ['meta'],
      auth: 'none',
      hidden: true,
      request: { params: z.object({ file: z.string() }) },
      responses: { 200: { description: 'Asset.' } },
      handler: ({ params }) => {
        const type = ASSETS[params.file];
        if (!type) throw errors.notFound();
        assets ??= loadAssets();
        return {
          status: 200,
          body: assets.get(params.file),
          headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' },
        };
      },
    }),
  ];
}
