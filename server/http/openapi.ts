// The OpenAPI document: generated from the procedures' meta by trpc-to-openapi, then corrected
// in this one place: full /api paths, the real success statuses, the documented error statuses
// with the error envelope, and bearer security on every authenticated operation.
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { statusOf, ZErrorBody, type TAppErrorCode } from '../../contracts/errors.ts';
import type { AppRouter } from '../routers/index.ts';
import { restRoutesOf } from './routes.ts';

type Operation = {
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, unknown>;
  requestBody?: unknown;
  parameters?: unknown[];
};
type PathItem = Record<string, Operation>;

const REASONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Missing, invalid or expired token',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body larger than BODY_LIMIT_BYTES',
  422: 'Validation error (invalid body, query or path parameter, or malformed JSON)',
  429: 'Too many requests (see Retry-After)',
  500: 'Internal error',
  502: 'Upstream broker unavailable',
  503: 'Service halted or feature disabled',
};

const errorResponse = (status: number, codes: Set<TAppErrorCode>) => ({
  description: `${REASONS[status] ?? 'Error'}. Codes: ${[...codes].join(', ')}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
});

export const buildOpenApiDocument = (router: AppRouter, version: string): string => {
  const doc = generateOpenApiDocument(router, {
    title: 'Trading service',
    description: 'Multi-user trading back end: auth, orders, analysis, backtests, live trading, events.',
    version,
    baseUrl: '/',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    defs: { ErrorBody: ZErrorBody },
  });

  const routeOf = new Map(restRoutesOf(router, '').map((route) => [`${route.method.toLowerCase()} ${route.template}`, route]));

  const paths: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, PathItem>)) {
    for (const [method, operation] of Object.entries(item)) {
      const route = routeOf.get(`${method} ${path}`);
      if (!route) continue;
      const { meta } = route;
      const success = meta.status ?? 200;
      const ok = operation.responses?.['200'] as Record<string, unknown> | undefined;
      const responses: Record<string, unknown> = {
        [String(success)]: success === 204 ? { description: 'No content' } : (ok ?? { description: 'OK' }),
      };

      const codes: TAppErrorCode[] = ['VALIDATION_ERROR', 'INTERNAL_ERROR', ...(meta.errors ?? [])];
      if (meta.openapi.protect) codes.push('UNAUTHORIZED');
      if (route.procedure.startsWith('admin.')) codes.push('FORBIDDEN');
      if (!meta.haltExempt) codes.push('SERVICE_HALTED');
      // The body limit applies wherever the runtime reads a body, before the procedure runs.
      if (route.readsBody) codes.push('PAYLOAD_TOO_LARGE');
      const byStatus = new Map<number, Set<TAppErrorCode>>();
      for (const code of codes) {
        const status = statusOf(code);
        byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
      }
      for (const [status, set] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(status)] = errorResponse(status, set);

      operation.responses = responses;
      if (meta.openapi.protect) operation.security = [{ bearerAuth: [] }];
      else delete operation.security;
    }
    paths[`/api${path}`] = item;
  }
  doc.paths = paths;
  // trpc-to-openapi adds schemas of its own error shape; our errors all use ErrorBody.
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  return JSON.stringify(doc);
};
