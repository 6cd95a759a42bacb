// Route templates of the REST facade, known before a request reaches a procedure, so logs and
// metrics name the route even for requests refused early (413, malformed JSON).
import type { AppRouter } from '../routers/index.ts';
import type { ProcedureMeta } from '../trpc/meta.ts';

interface RouteTemplate {
  method: string;
  template: string;
  pattern: RegExp;
}

const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

export const compileRouteTemplates = (router: AppRouter, prefix: string): ((method: string, pathname: string) => string | undefined) => {
  const routes: RouteTemplate[] = [];
  for (const definition of Object.values(router._def.procedures)) {
    const meta = (definition as unknown as { _def: { meta?: ProcedureMeta } })._def.meta;
    if (!meta?.openapi) continue;
    const template = `${prefix}${meta.openapi.path}`;
    const source = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : escape(part)))
      .join('');
    routes.push({ method: meta.openapi.method, template, pattern: new RegExp(`^${source}/?$`) });
  }
  // Literal segments win over parameters, as trpc-to-openapi matches them.
  routes.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  return (method, pathname) => routes.find((route) => route.method === method && route.pattern.test(pathname))?.template;
};
