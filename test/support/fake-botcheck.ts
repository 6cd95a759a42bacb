// A Turnstile/hCaptcha-style siteverify endpoint on 127.0.0.1: reads the form POST (secret,
// response, remoteip) and answers {success, error-codes} as the providers do. A response token
// is good when it starts with `pass`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './request-body.ts';

export interface VerifyRequest {
  contentType: string;
  form: Record<string, string>;
}

export const startFakeBotCheck = async ({ secret }: { secret: string }) => {
  const requests: VerifyRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const form = Object.fromEntries(new URLSearchParams(text));
      requests.push({ contentType: request.headers['content-type'] ?? '', form });
      const errors = form.secret !== secret ? ['invalid-input-secret'] : !form.response?.startsWith('pass') ? ['invalid-input-response'] : [];
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: errors.length === 0, 'error-codes': errors, hostname: 'localhost' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    requests,
    url: `http://127.0.0.1:${port}/siteverify`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
