// A webhook receiver on 127.0.0.1 for the alerts tests: records every request and answers each
// with the status a test scripts (or never answers at all).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsedJson, readBody } from './request-body.ts';

export interface WebhookRequest {
  path: string;
  body: any;
}

export interface FakeWebhookOptions {
  /** The answer to the nth request (1-based): a status, or 'never' to hold it open. Default 200. */
  answer?: (nth: number) => number | 'never';
}

export const startFakeWebhook = async (options: FakeWebhookOptions = {}) => {
  const answer = options.answer ?? (() => 200);
  const requests: WebhookRequest[] = [];
  /** The bodies it answered 2xx to: what a chat would show. */
  const accepted: any[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const body = parsedJson(text);
      requests.push({ path: request.url ?? '', body });
      const status = answer(requests.length);
      if (status === 'never') return;
      if (status >= 200 && status < 300) accepted.push(body);
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'failed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    requests,
    accepted,
    /** The receiver's URL at `path` (put a token in it to check it never reaches a log). */
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeWebhook = Awaited<ReturnType<typeof startFakeWebhook>>;
