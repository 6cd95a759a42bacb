// One request through node:http, so it carries exactly the headers given (fetch adds a
// text/plain content type to string bodies) and the path as written (fetch folds `..`).
import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

export const sendRaw = (baseUrl: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}) =>
  new Promise<RawResponse>((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers: opts.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
