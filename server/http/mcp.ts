// /mcp: the MCP endpoint (streamable HTTP) for AI assistants, authenticated by a personal API key
// (DESIGN §6 "Integrations"). The key is resolved by the API keys' own check (401 when missing,
// unknown, revoked or expired), and each tool call runs its procedure through tRPC's caller
// with this request's context, so the guard checks the key again with its scopes.
//
// Stateless: every POST gets an MCP server and a transport of its own, which end with the
// response. No session lives in the instance, so any instance behind a balancer answers any
// request, a revoked key ends with its next request, and nothing needs to be swept; what a
// session would hold (the key's scopes, the tool list) costs one key lookup per request, which
// every REST call pays too. Answers are JSON, not SSE streams: no tool reports progress.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { isApiKey } from '../auth/api-keys.ts';
import { AppError } from '../errors.ts';
import { procedureCaller } from '../trpc/caller.ts';
import { contextFor, type RequestState } from '../trpc/context.ts';
import { describeFailure } from '../trpc/errors.ts';
import { bearerTokenOf } from '../trpc/init.ts';
import { errorBody, sendError } from './io.ts';
import { createMcpServer, mcpToolsOf, type McpTool, type ToolOutcome } from './mcp-tools.ts';

export const MCP_PATH = '/mcp';

export type McpHandler = (req: IncomingMessage, res: ServerResponse, state: RequestState) => Promise<void>;

export const createMcpHandler = (router: AppRouter, services: Services): McpHandler => {
  const { config, logger } = services;
  // Resolved at the first request rather than here: a server built over a router of a few
  // procedures (a test's) has no tools to resolve, and never serves /mcp.
  let tools: McpTool[] | undefined;
  const procedureOf = procedureCaller(router);

  /** The key's caller, or undefined when the request was refused (answered here). */
  const callerOf = async (res: ServerResponse, state: RequestState) => {
    try {
      if (services.halt.isHalted()) throw new AppError('SERVICE_HALTED');
      const token = bearerTokenOf(state.authorization);
      if (!token || !isApiKey(token)) throw new AppError('UNAUTHORIZED', 'The MCP endpoint takes a personal API key: Authorization: Bearer tsk_…');
      const caller = await services.apiKeys.authenticate(token);
      state.http.userId = caller.user.id;
      return caller;
    } catch (cause) {
      const described = describeFailure(cause, (err) => logger.error({ err, reqId: state.origin.requestId }, 'mcp request failed'));
      sendError(res, errorBody(described.domainCode, described.message, described.errors), described.retryAfterSec);
      return undefined;
    }
  };

  return async (req, res, state) => {
    // Without sessions there is no stream to open (GET) nor session to end (DELETE): the
    // protocol's answer is 405.
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      sendError(res, errorBody('METHOD_NOT_ALLOWED', 'The MCP endpoint takes POST only (stateless streamable HTTP)'));
      return;
    }
    const caller = await callerOf(res, state);
    if (!caller) return;
    const call = async (procedure: string, input: unknown): Promise<ToolOutcome> => {
      try {
        return { ok: true, output: await procedureOf(contextFor(services, state), procedure)(input) };
      } catch (cause) {
        return { ok: false, ...describeFailure(cause, (err) => logger.error({ err, procedure, reqId: state.origin.requestId }, 'procedure failed')) };
      }
    };
    const mcp = createMcpServer({ tools: (tools ??= mcpToolsOf(router)), scopes: caller.scopes, version: services.version, call });
    // The transport reads the body itself, under the service's body limit; what it refuses
    // (size, media type, malformed JSON-RPC) it answers as JSON-RPC errors, which MCP clients read.
    // A key travels in a header, never in a cookie, so a DNS-rebound page cannot send one: the
    // transport's Host/Origin allow-lists add nothing here.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true, maxRequestBodySize: config.BODY_LIMIT_BYTES });
    // Closing the server closes its transport.
    res.once('close', () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };
};
