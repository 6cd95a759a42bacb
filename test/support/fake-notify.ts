// The notification endpoints on 127.0.0.1, each speaking its real wire format: a webhook
// receiver that checks X-Signature against the secret a test gives it, Slack's incoming webhook
// (`{text}`, answered `ok`), Discord's (`{content}`, answered 204), and Telegram's Bot API
// sendMessage (`{chat_id, text}`, answered `{ok: true, result: {...}}`). One server, told apart
// by path as the real services are by host. A test may script failures per path.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './request-body.ts';

export type FakeNotifyKind = 'webhook' | 'slack' | 'discord' | 'telegram';

export interface FakeNotifyRequest {
  kind: FakeNotifyKind;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: any;
  /** webhook: whether the signature matched the path's secret (undefined when no secret is known). */
  signatureValid?: boolean;
  status: number;
}

const kindOf = (path: string): FakeNotifyKind | undefined => {
  if (path.startsWith('/services/')) return 'slack';
  if (path.startsWith('/api/webhooks/')) return 'discord';
  if (/^\/bot[^/]+\/sendMessage$/.test(path)) return 'telegram';
  if (path.startsWith('/hook/')) return 'webhook';
  return undefined;
};

/** Verifies a webhook delivery as a receiver would: HMAC-SHA256 of "<timestamp>.<body>". */
export const verifySignature = (secret: string, timestamp: string, raw: string, signature: string): boolean => {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
};

const parse = (raw: string): any => {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
};

/** The kind's own answer to a well-formed request, or its refusal of a malformed one. */
const answerOf = (kind: FakeNotifyKind, body: any): { status: number; type: string; text: string } => {
  switch (kind) {
    case 'slack':
      return typeof body?.text === 'string' ? { status: 200, type: 'text/plain', text: 'ok' } : { status: 400, type: 'text/plain', text: 'invalid_payload' };
    case 'discord':
      return typeof body?.content === 'string' ? { status: 204, type: 'text/plain', text: '' } : { status: 400, type: 'application/json', text: '{"message":"Cannot send an empty message","code":50006}' };
    case 'telegram':
      if (body?.chat_id === undefined || typeof body?.text !== 'string') return { status: 400, type: 'application/json', text: '{"ok":false,"error_code":400,"description":"Bad Request: message text is empty"}' };
      return { status: 200, type: 'application/json', text: JSON.stringify({ ok: true, result: { message_id: 1, chat: { id: body.chat_id }, date: 0, text: body.text } }) };
    default:
      return { status: 200, type: 'text/plain', text: 'ok' };
  }
};

export const startFakeNotify = async () => {
  const requests: FakeNotifyRequest[] = [];
  const secrets = new Map<string, string>();
  /** Per path, the statuses to answer the next requests with (then the kind's own answer). */
  const scripted = new Map<string, number[]>();
  const failing = new Set<string>();
  const server = createServer((request, response) => {
    void readBody(request).then((raw) => {
      const path = request.url ?? '';
      const kind = kindOf(path);
      if (!kind || request.method !== 'POST') {
        response.writeHead(404).end();
        return;
      }
      const body = parse(raw);
      let answer = answerOf(kind, body);
      let signatureValid: boolean | undefined;
      const secret = secrets.get(path);
      if (kind === 'webhook' && secret !== undefined) {
        signatureValid = verifySignature(secret, String(request.headers['x-signature-timestamp'] ?? ''), raw, String(request.headers['x-signature'] ?? ''));
        if (!signatureValid) answer = { status: 401, type: 'text/plain', text: 'bad signature' };
      }
      const next = scripted.get(path)?.shift();
      if (next !== undefined) answer = { status: next, type: 'text/plain', text: 'scripted' };
      else if (failing.has(path)) answer = { status: 500, type: 'text/plain', text: 'down' };
      requests.push({ kind, path, headers: request.headers, raw, body, ...(signatureValid === undefined ? {} : { signatureValid }), status: answer.status });
      response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    /** The requests each path answered 2xx: what a chat would show. */
    delivered: (path: string) => requests.filter((entry) => entry.path === path && entry.status < 300),
    slackUrl: (name: string) => `${base}/services/T000/B000/${name}`,
    discordUrl: (name: string) => `${base}/api/webhooks/1234/${name}`,
    webhookUrl: (name: string) => `${base}/hook/${name}`,
    telegramApiUrl: base,
    /** Webhook deliveries to `path` are checked against `secret` (a bad signature is answered 401). */
    expectSecret: (path: string, secret: string) => secrets.set(path, secret),
    /** The next requests to `path` are answered with these statuses. */
    script: (path: string, statuses: number[]) => scripted.set(path, [...statuses]),
    /** Every request to `path` is answered 500. */
    fail: (path: string) => failing.add(path),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeNotify = Awaited<ReturnType<typeof startFakeNotify>>;
