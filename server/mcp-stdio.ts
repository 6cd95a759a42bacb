// `npm run mcp`: the service's MCP tools over stdio, for assistants that start their tools as a
// program (Claude Desktop and the like). A thin client of a running service: it opens no
// database and reads no service setting; each tools/list and tools/call is relayed to the
// service's /mcp with the personal API key of the environment, so the service lists what the
// key's scopes reach and runs every call through its gates. Settings, from the environment:
//   TRADING_URL      the service's base URL (default http://127.0.0.1:8000)
//   TRADING_API_KEY  a personal API key (tsk_…), required
// It relays JSON Schemas it did not define, which is what the SDK's low-level Server is for
// (McpServer registers tools from zod schemas).
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const base = process.env.TRADING_URL || 'http://127.0.0.1:8000';
const key = process.env.TRADING_API_KEY;
if (!key) {
  process.stderr.write('npm run mcp: set TRADING_API_KEY to a personal API key (tsk_…); create one with POST /api/auth/api-keys or in the console\n');
  process.exit(2);
}
const endpoint = new URL('mcp', base.endsWith('/') ? base : `${base}/`);

/** The session with the service, opened at the first request and again after one that failed. */
let remote: Promise<Client> | undefined;
const service = (): Promise<Client> =>
  (remote ??= (async () => {
    const client = new Client({ name: 'trading-service-stdio', version });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    return client;
  })().catch((error: unknown) => {
    remote = undefined;
    throw new Error(`No session with ${endpoint.href}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }));

const server = new Server({ name: 'trading-service', version }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async (request) => (await service()).listTools(request.params));
server.setRequestHandler(CallToolRequestSchema, async (request) => (await service()).callTool(request.params));
await server.connect(new StdioServerTransport());
