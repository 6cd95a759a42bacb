// Prints the OpenAPI document to stdout, built from the routers as the server builds it, without
// starting a server or opening a database: what `npm run lint:openapi` and CI hand to redocly.
import { readFileSync } from 'node:fs';
import { appRouter } from '../server/routers/index.ts';
import { buildOpenApiDocument } from '../server/http/openapi.ts';

// Read here rather than imported from server/app.ts, which would load every driver just for this.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

process.stdout.write(`${buildOpenApiDocument(appRouter, version)}\n`);
