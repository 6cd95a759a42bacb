// Raw HTTP/1.1 over one TCP connection, for what no HTTP client sends (a malformed request line,
// a bad Content-Length, oversized headers) and for several requests on one kept-alive connection.
import { connect } from 'node:net';

export interface WireResponse {
  status: number;
  /** Lower-case names; our answers never repeat a header. */
  headers: Record<string, string>;
  text: string;
  body: any;
}

export interface Wire {
  write(data: string): void;
  /** The next whole response on the connection (framed by Content-Length). */
  response(): Promise<WireResponse>;
  /** Settles when the server has closed the connection. */
  closed: Promise<void>;
  destroy(): void;
}

export const openWire = (port: number): Promise<Wire> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let ended = false;
    let waiting: { resolve: (response: WireResponse) => void; reject: (error: Error) => void } | undefined;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));

    const take = (): WireResponse | undefined => {
      const headEnd = buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) return undefined;
      const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < headEnd + 4 + length) return undefined;
      const text = buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      buffer = buffer.subarray(headEnd + 4 + length);
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, text, body };
    };
    const settle = () => {
      if (!waiting) return;
      const response = take();
      if (response) {
        waiting.resolve(response);
        waiting = undefined;
      } else if (ended) {
        waiting.reject(new Error(`connection closed without a whole response; received: ${buffer.toString('latin1').slice(0, 200)}`));
        waiting = undefined;
      }
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      settle();
    });
    socket.on('close', () => {
      ended = true;
      settle();
    });
    socket.once('connect', () => {
      // After connecting, a reset (the server closing on a request it refused) shows as 'close'.
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve({
        write: (data) => socket.write(data),
        response: () =>
          new Promise<WireResponse>((resolveResponse, rejectResponse) => {
            waiting = { resolve: resolveResponse, reject: rejectResponse };
            settle();
          }),
        closed,
        destroy: () => socket.destroy(),
      });
    });
    socket.once('error', reject);
  });
