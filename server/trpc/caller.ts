// Server-side calls of the app router's procedures by their dotted path, for the transports that
// are not tRPC's own (the REST facade, the MCP tools): tRPC's caller runs every middleware (halt,
// credential, scope, role), input and output schema exactly as /trpc does.
import type { AppRouter } from '../routers/index.ts';
import type { Context } from './context.ts';
import { createCallerFactory } from './init.ts';

export type ProcedureCall = (input: unknown) => Promise<unknown>;

/** `(ctx, 'equity.placeOrder')` → that procedure, called as the context's caller. */
export const procedureCaller = (router: AppRouter) => {
  const createCaller = createCallerFactory(router);
  return (ctx: Context, path: string): ProcedureCall =>
    path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], createCaller(ctx)) as ProcedureCall;
};
