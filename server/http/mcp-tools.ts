// The MCP tools (DESIGN §6 "Integrations"): each is one procedure of the app router, and takes
// the rest from it: its input schema is the procedure's contract (contracts/), its scope the
// procedure's `meta.apiKeyScope`, its description the route's summary, its arguments' words
// the OpenAPI document's. A tool can therefore reach nothing its REST route does not, and a
// call runs the procedure itself: halt, credential, scope (and `live` for a live order), gates,
// audit and rate limits alike. The SDK (1.32) takes zod 4 schemas as they are (it converts them
// with zod's own toJSONSchema), so the contracts serve it unchanged, from the one zod installed.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { TApiKeyScope } from '../../contracts/auth.ts';
import { descriptionOf } from '../../contracts/descriptions.ts';
import type { AppRouter } from '../routers/index.ts';
import type { DomainErrorData } from '../trpc/errors.ts';
import type { ProcedureMeta } from '../trpc/meta.ts';
import { errorBody } from './io.ts';
import { describeProperties, operationIdOf } from './openapi.ts';

interface ToolSpec {
  name: string;
  title: string;
  /** Dotted path of the procedure the tool calls. */
  procedure: string;
  /** Said after the route's summary, where a tool's caller needs more than a REST caller. */
  hint?: string;
}

/** The tools, in the order they are listed. */
export const TOOL_SPECS: readonly ToolSpec[] = [
  { name: 'get_account', title: 'Account', procedure: 'equity.account', hint: 'Cash, equity and buying power.' },
  { name: 'get_positions', title: 'Positions', procedure: 'equity.positions' },
  { name: 'list_orders', title: 'Orders', procedure: 'equity.listOrders' },
  { name: 'get_order', title: 'One order', procedure: 'equity.getOrder' },
  { name: 'place_order', title: 'Place an order', procedure: 'equity.placeOrder', hint: 'Paper unless live_mode is true, which needs the key’s live scope and live trading enabled for the asset class.' },
  { name: 'cancel_order', title: 'Cancel an order', procedure: 'equity.cancelOrder' },
  { name: 'list_strategies', title: 'Backtest strategies', procedure: 'backtest.strategies', hint: 'The strategy_name and strategy_params a backtest takes.' },
  { name: 'run_backtest', title: 'Run a stock backtest', procedure: 'backtest.equity.run', hint: 'asset_class us_equity or kr_equity.' },
  { name: 'get_backtest', title: 'A stock backtest', procedure: 'backtest.equity.get' },
  { name: 'run_crypto_backtest', title: 'Run a crypto backtest', procedure: 'backtest.crypto.run', hint: 'asset_class crypto.' },
  { name: 'get_crypto_backtest', title: 'A crypto backtest', procedure: 'backtest.crypto.get' },
  { name: 'request_analysis', title: 'Request an analysis', procedure: 'analysis.analyze', hint: 'Queued unless inline (quick mode only); read the report with get_analysis and its report_id.' },
  { name: 'get_analysis', title: 'An analysis report', procedure: 'analysis.getReport' },
  { name: 'get_performance', title: 'Performance', procedure: 'equity.performance' },
];

/** A tool as the service knows it: its spec, what it needs, and its listing. */
export interface McpTool {
  spec: ToolSpec;
  scope: TApiKeyScope;
  /** The procedure's input contract; undefined for a procedure that takes none. */
  input: z.ZodType | undefined;
  definition: Tool;
}

interface ProcedureDef {
  meta?: ProcedureMeta;
  inputs: unknown[];
}

const NO_INPUT = z.object({});

/** A tool's arguments as JSON Schema, each argument described as the OpenAPI document describes it. */
const argumentsSchema = (input: z.ZodType | undefined, procedure: string): Tool['inputSchema'] => {
  const schema = toJsonSchemaCompat(input ?? NO_INPUT, { strictUnions: true, pipeStrategy: 'input' }) as Tool['inputSchema'];
  const id = operationIdOf(procedure);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const description = descriptionOf(name, [`${id}.request`, id], true);
    if (description !== undefined && typeof property === 'object' && property !== null) (property as { description?: string }).description ??= description;
  }
  describeProperties(schema, [`${id}.request`, id]);
  return schema;
};

/**
 * The tools, resolved once against the router. A spec naming a procedure that is missing, or
 * that takes no API key, throws (test/integration/mcp.test.ts lists every tool): it would be a
 * tool nobody can call.
 */
export const mcpToolsOf = (router: AppRouter): McpTool[] =>
  TOOL_SPECS.map((spec) => {
    const found = (router._def.procedures as unknown as Record<string, { _def: ProcedureDef } | undefined>)[spec.procedure];
    const def = found?._def;
    const scope = def?.meta?.apiKeyScope;
    if (!def || !scope) throw new Error(`MCP tool ${spec.name}: ${spec.procedure} is no procedure an API key reaches`);
    const declared = def.inputs[0];
    const input = declared instanceof z.ZodType && !(declared instanceof z.ZodVoid) ? declared : undefined;
    const summary = def.meta?.openapi?.summary ?? spec.title;
    return {
      spec,
      scope,
      input,
      definition: {
        name: spec.name,
        title: spec.title,
        description: [summary.endsWith('.') ? summary : `${summary}.`, spec.hint, `Needs the API key scope ${scope}.`].filter(Boolean).join(' '),
        inputSchema: argumentsSchema(input, spec.procedure),
        annotations: { readOnlyHint: scope === 'read', openWorldHint: false },
      },
    };
  });

/** How a tool's call ended: the procedure's output, or the error its caller would get on REST. */
export type ToolOutcome = { ok: true; output: unknown } | ({ ok: false; message: string } & DomainErrorData);

/** The answer to a tools/call: the output as JSON (text and structured), or the error envelope. */
const resultOf = (outcome: ToolOutcome): CallToolResult => {
  if (!outcome.ok) {
    const envelope = errorBody(outcome.domainCode, outcome.message, outcome.errors);
    const fields = outcome.errors?.map((error) => `${error.path || '(body)'}: ${error.message}`).join('; ');
    const retry = outcome.retryAfterSec === undefined ? '' : ` Retry after ${outcome.retryAfterSec} s.`;
    return { isError: true, content: [{ type: 'text', text: `${outcome.domainCode}: ${outcome.message}${fields ? ` (${fields})` : ''}${retry}` }], structuredContent: { ...envelope } };
  }
  // A procedure without an answer (a cancel) did what it was asked.
  if (outcome.output === undefined) return { content: [{ type: 'text', text: 'Done.' }] };
  return { content: [{ type: 'text', text: JSON.stringify(outcome.output) }], structuredContent: outcome.output as Record<string, unknown> };
};

export interface McpServerOptions {
  tools: readonly McpTool[];
  /** The scopes of the caller's key: which tools are listed. */
  scopes: ReadonlySet<TApiKeyScope>;
  version: string;
  /** Runs a tool's procedure as the caller; never throws. */
  call: (procedure: string, input: unknown) => Promise<ToolOutcome>;
}

/**
 * An MCP server for one caller. Every tool is registered, so a call of one outside the key's
 * scopes reaches its procedure and is refused there, with the message that names the scope
 * (as on REST); the listing shows only the tools the key's scopes reach. The SDK checks the
 * arguments against the same contract before the procedure does: the contracts' transforms
 * (trimming, integer parameters) give the same value parsed twice.
 */
export const createMcpServer = ({ tools, scopes, version, call }: McpServerOptions): McpServer => {
  const mcp = new McpServer({ name: 'trading-service', version }, { instructions: 'Trading service: account, positions and orders per asset class (crypto, us_equity, kr_equity), paper unless a live order is asked for; backtests; analysis reports; performance.' });
  for (const tool of tools) {
    mcp.registerTool(tool.spec.name, { title: tool.spec.title, description: tool.definition.description, inputSchema: tool.input ?? NO_INPUT, annotations: tool.definition.annotations }, async (args: unknown) =>
      resultOf(await call(tool.spec.procedure, tool.input ? args : undefined)),
    );
  }
  // Replaces the SDK's listing of every registered tool.
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.filter((tool) => scopes.has(tool.scope)).map((tool) => tool.definition) }));
  return mcp;
};
