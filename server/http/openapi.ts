// The OpenAPI document: generated from the procedures' meta by trpc-to-openapi, then corrected
// in this one place: full /api paths, stable operation ids, the real success statuses, the
// documented error statuses with the error envelope, security on every operation, and the plain
// /health routes beside the procedures.
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { statusOf, ZErrorBody, type TAppErrorCode } from '../../contracts/errors.ts';
import { ZFeatureFlags, ZHealth } from '../../contracts/health.ts';
import { nameSchemas } from '../../contracts/schema-names.ts';
import type { AppRouter } from '../routers/index.ts';
import { restRoutesOf, type RestRoute } from './routes.ts';

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
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
  415: 'Body declared as a media type other than JSON',
  422: 'Validation error (invalid body, query or path parameter, or malformed JSON)',
  429: 'Too many requests (see Retry-After)',
  500: 'Internal error',
  502: 'Upstream broker unavailable',
  503: 'Service halted, feature disabled, or the database unreachable (see Retry-After)',
};

const BEARER = [{ bearerAuth: [] }];
/** Explicitly public: without it a linter cannot tell a public operation from a forgotten one. */
const PUBLIC: unknown[] = [];

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: schemaRef(name) } });

const errorResponse = (status: number, codes: Set<TAppErrorCode>) => ({
  description: `${REASONS[status] ?? 'Error'}. Codes: ${[...codes].join(', ')}`,
  content: json('ErrorBody'),
});

/**
 * `auth.login` → `authLogin`: derived from the procedure path alone, so an id stays the same
 * while the route's path or method changes, and clients generated from the document keep their
 * method names.
 */
export const operationIdOf = (procedure: string): string =>
  procedure
    .split('.')
    .map((part, index) => (index === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');

const errorCodesOf = (route: RestRoute): TAppErrorCode[] => {
  const { meta } = route;
  // Any route may find the database gone (503 SERVICE_UNAVAILABLE).
  const codes: TAppErrorCode[] = ['VALIDATION_ERROR', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', ...(meta.errors ?? [])];
  if (meta.openapi.protect) codes.push('UNAUTHORIZED');
  if (route.procedure.startsWith('admin.')) codes.push('FORBIDDEN');
  if (!meta.haltExempt) codes.push('SERVICE_HALTED');
  // The body rules apply wherever the runtime reads a body, before the procedure runs.
  if (route.readsBody) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  return codes;
};

const responsesOf = (route: RestRoute, generated: Operation): Record<string, unknown> => {
  const success = route.meta.status ?? 200;
  const ok = generated.responses?.['200'];
  const responses: Record<string, unknown> = {
    [String(success)]: success === 204 ? { description: 'No content' } : (ok ?? { description: 'OK' }),
  };
  const byStatus = new Map<number, Set<TAppErrorCode>>();
  for (const code of errorCodesOf(route)) {
    const status = statusOf(code);
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(status)] = errorResponse(status, codes);
  return responses;
};

/** The plain node:http routes of server/http/server.ts; their bodies are the contracts' schemas. */
const healthPaths = (): Record<string, PathItem> => ({
  '/health': {
    get: {
      operationId: 'health',
      summary: 'Liveness and database reachability',
      tags: ['health'],
      security: PUBLIC,
      responses: {
        '200': { description: 'The service and its database answer (also while halted: see `halted`)', content: json('Health') },
        '503': { description: 'The database does not answer: `status` is `degraded`, `db` is `down`', content: json('Health') },
      },
    },
  },
  '/health/flags': {
    get: {
      operationId: 'healthFlags',
      summary: 'Every FEATURE_* setting and ALLOW_LIVE, keyed by setting name',
      tags: ['health'],
      security: PUBLIC,
      responses: { '200': { description: 'The flags in force', content: json('FeatureFlags') } },
    },
  },
});

export const buildOpenApiDocument = (router: AppRouter, version: string): string => {
  nameSchemas();
  const doc = generateOpenApiDocument(router, {
    title: 'Trading service',
    description: 'Multi-user trading back end: auth, orders, analysis, backtests, live trading, events.',
    version,
    // As in package.json; a test holds the two together.
    license: { name: 'MIT', identifier: 'MIT' },
    baseUrl: '/',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    defs: { ErrorBody: ZErrorBody, Health: ZHealth, FeatureFlags: ZFeatureFlags },
  });

  const routeOf = new Map(restRoutesOf(router, '').map((route) => [`${route.method.toLowerCase()} ${route.template}`, route]));

  const paths: Record<string, PathItem> = {};
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, PathItem>)) {
    for (const [method, operation] of Object.entries(item)) {
      const route = routeOf.get(`${method} ${path}`);
      // Both read the same meta: an operation without a route would be a bug in routes.ts.
      if (!route) throw new Error(`OpenAPI operation ${method.toUpperCase()} ${path} has no REST route`);
      operation.operationId = operationIdOf(route.procedure);
      operation.responses = responsesOf(route, operation);
      operation.security = route.meta.openapi.protect ? BEARER : PUBLIC;
    }
    paths[`/api${path}`] = item;
  }
  Object.assign(paths, healthPaths());

  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const clash = seen.get(operation.operationId ?? '');
      if (clash) throw new Error(`OpenAPI operationId ${operation.operationId} names both ${clash} and ${where}`);
      seen.set(operation.operationId ?? '', where);
    }
  }
  doc.paths = paths;
  // trpc-to-openapi adds schemas of its own error shape; our errors all use ErrorBody.
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  return JSON.stringify(doc);
};
