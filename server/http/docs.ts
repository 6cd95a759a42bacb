// GET /docs: Swagger UI over /api/openapi.json, its assets served from the swagger-ui-dist
// package (never a CDN).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';

const ASSET_DIR = path.dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Trading service API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true, validatorUrl: null });
  </script>
</body>
</html>
`;

const cache = new Map<string, Buffer>();

/** Serves /docs and its assets; false when the path is none of them. */
export const serveDocs = (pathname: string, res: ServerResponse): boolean => {
  if (pathname === '/docs' || pathname === '/docs/') {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(PAGE);
    return true;
  }
  const name = pathname.startsWith('/docs/') ? pathname.slice('/docs/'.length) : '';
  const type = ASSETS[name];
  if (!type) return false;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(path.join(ASSET_DIR, name));
    cache.set(name, body);
  }
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.end(body);
  return true;
};
