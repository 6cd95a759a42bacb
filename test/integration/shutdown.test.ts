// Graceful shutdown: close() stops accepting new connections, lets a request already in flight
// finish with its real answer, then closes the database.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startTestServer, uniqueName } from '../support/server.ts';

describe('graceful shutdown', () => {
  it('finishes an in-flight request, then refuses new connections', async () => {
    const server = await startTestServer();
    const username = uniqueName('inflight');
    const body = JSON.stringify({ username, email: `${username}@example.com`, password: 'in-flight-password' });
    const half = Math.floor(body.length / 2);

    const req = request(`${server.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.once('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.once('error', reject);
    });

    // The server has our request (headers parsed) while its body is still incomplete: it is
    // in flight for as long as we hold back the second half. No timing involved.
    const received = new Promise<void>((resolve) => server.server.once('request', () => resolve()));
    req.write(body.slice(0, half));
    await received;

    const closing = server.close();
    req.end(body.slice(half));
    const { status, text } = await answer;
    expect(status, text).toBe(201);
    expect(JSON.parse(text)).toMatchObject({ username });
    await closing;

    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    await server.stop();
  });
});
