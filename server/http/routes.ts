// The REST route table, compiled once from the procedures' OpenAPI meta: which procedure a
// method and path reach, with the path's parameters. Literal segments win over parameters.
// The one place that reads procedure definitions; the OpenAPI document is built from it too.
import { instanceofZodTypeObject, unwrapZodType } from 'trpc-to-openapi';
import type { AppRouter } from '../routers/index.ts';
import type { ProcedureMeta } from '../trpc/meta.ts';

export interface RestRoute {
  method: string;
  /** e.g. `/api/admin/users/{user_id}/deactivate`: what logs and metrics call the route. */
  template: string;
  /** Dotted procedure path, e.g. `admin.deactivateUser`. */
  procedure: string;
  meta: ProcedureMeta & { openapi: NonNullable<ProcedureMeta['openapi']> };
  /** Input comes from the JSON body (POST, PUT, PATCH) or from the query string. */
  readsBody: boolean;
  /** The procedure declares no input (or a void one). */
  takesNoInput: boolean;
  /** Query fields whose schema is an array: a single `?x=1` still arrives as `[ '1' ]`. */
  arrayFields: ReadonlySet<string>;
  pattern: RegExp;
  paramNames: string[];
}

export interface RouteMatch {
  route: RestRoute;
  params: Record<string, string>;
}

export type RouteMatcher = (method: string, pathname: string) => RouteMatch | undefined;

interface ProcedureDef {
  type: 'query' | 'mutation' | 'subscription';
  meta?: ProcedureMeta;
  inputs: unknown[];
}

/** A malformed %-escape stays as written: the input schema then refuses it (422), as any bad value. */
const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly']);

/** A field schema's kind under its optional / nullable / default wrappers. */
const kindOf = (schema: unknown): string | undefined => {
  let def = (schema as { _zod?: { def?: { type?: string; innerType?: unknown } } })._zod?.def;
  while (def?.type && WRAPPERS.has(def.type)) def = (def.innerType as { _zod?: { def?: typeof def } } | undefined)?._zod?.def;
  return def?.type;
};

const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

const inputShapeOf = (def: ProcedureDef) => {
  if (def.inputs.length !== 1) return undefined;
  const input = unwrapZodType(def.inputs[0] as never, true);
  return instanceofZodTypeObject(input) ? (input as unknown as { shape: Record<string, unknown> }).shape : undefined;
};

/** Every procedure with an OpenAPI route, as a route, fewest path parameters first. */
export const restRoutesOf = (router: AppRouter, prefix: string): RestRoute[] => {
  const routes: RestRoute[] = [];
  for (const [procedure, definition] of Object.entries(router._def.procedures)) {
    const def = (definition as unknown as { _def: ProcedureDef })._def;
    const openapi = def.meta?.openapi;
    if (!openapi || def.type === 'subscription') continue;
    const template = `${prefix}${openapi.path}`;
    const paramNames: string[] = [];
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => {
        if (!part.startsWith('{')) return escape(part);
        paramNames.push(part.slice(1, -1));
        return '([^/]+)';
      })
      .join('');
    const shape = inputShapeOf(def);
    const arrayFields = new Set(
      Object.entries(shape ?? {})
        .filter(([, schema]) => kindOf(schema) === 'array')
        .map(([name]) => name),
    );
    routes.push({
      method: openapi.method,
      template,
      procedure,
      meta: { ...def.meta, openapi },
      readsBody: !['GET', 'DELETE'].includes(openapi.method),
      takesNoInput: def.inputs.length === 0 || kindOf(def.inputs[0]) === 'void',
      arrayFields,
      pattern: new RegExp(`^${source}/?$`),
      paramNames,
    });
  }
  return routes.sort((a, b) => a.paramNames.length - b.paramNames.length);
};

export const compileRestRoutes = (router: AppRouter, prefix: string): RouteMatcher => {
  const routes = restRoutesOf(router, prefix);
  const literal = new Map(routes.filter((route) => route.paramNames.length === 0).map((route) => [`${route.method} ${route.template}`, route]));

  return (method, pathname) => {
    const exact = literal.get(`${method} ${pathname.endsWith('/') ? pathname.slice(0, -1) : pathname}`);
    if (exact) return { route: exact, params: {} };
    for (const route of routes) {
      if (route.method !== method || route.paramNames.length === 0) continue;
      const found = route.pattern.exec(pathname);
      if (!found) continue;
      const params: Record<string, string> = {};
      route.paramNames.forEach((name, index) => (params[name] = decodeSegment(found[index + 1]!)));
      return { route, params };
    }
    return undefined;
  };
};
