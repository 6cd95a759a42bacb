// The reference point: a bare trpc-to-openapi handler with one zod route, served the
// library's standard way (createOpenApiHttpHandler on node:http), answering the same JSON as
// ours. No auth, no middleware, no logging, no metrics: what the REST facade alone costs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import { createOpenApiHttpHandler, type OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';

export const startBareServer = async (route: string, payload: unknown): Promise<{ server: Server; url: string }> => {
  const t = initTRPC.meta<OpenApiMeta>().create();
  const ZPayload = z.object({}).catchall(z.unknown());
  const router = t.router({
    me: t.procedure
      .meta({ openapi: { method: 'GET', path: route.replace(/^\/api/, '') as `/${string}` } })
      .input(z.void())
      .output(ZPayload)
      .query(() => ZPayload.parse(payload)),
  });
  const handler = createOpenApiHttpHandler({ router, createContext: () => ({}) });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.url = (req.url ?? '/').replace(/^\/api/, '');
    void handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};
