// A WebSocket spoken by hand on a net socket, for frames no client library sends: oversized,
// invalid (bad UTF-8, a reserved opcode), or written together with the upgrade request itself,
// so that they reach the server before anything it checks at connect has finished.
import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { SAFETY_NET_MS } from './wait.ts';

export const OPCODE = { text: 0x1, binary: 0x2, reserved: 0x3, close: 0x8 } as const;

/** One client frame (masked, as clients must), FIN set. */
export const clientFrame = (opcode: number, payload: Buffer | string): Buffer => {
  const data = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const mask = randomBytes(4);
  let header: Buffer;
  if (data.length < 126) header = Buffer.from([0x80 | opcode, 0x80 | data.length]);
  else if (data.length < 65_536) {
    header = Buffer.alloc(4);
    header.writeUInt8(0x80 | opcode, 0);
    header.writeUInt8(0x80 | 126, 1);
    header.writeUInt16BE(data.length, 2);
  } else {
    header = Buffer.alloc(10);
    header.writeUInt8(0x80 | opcode, 0);
    header.writeUInt8(0x80 | 127, 1);
    header.writeBigUInt64BE(BigInt(data.length), 2);
  }
  const masked = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) masked[i] = data[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, masked]);
};

export interface RawOutcome {
  /** The HTTP status of the upgrade's answer (101 when it was upgraded). */
  status: number;
  /** The text frames the server sent before it closed. */
  texts: string[];
  /** The code of the server's close frame; undefined when the connection ended without one. */
  code: number | undefined;
  reason: string;
}

/** Reads the server's frames (unmasked) from `buffer`; returns those complete and the bytes left. */
const serverFrames = (buffer: Buffer): { frames: { opcode: number; payload: Buffer }[]; rest: Buffer } => {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let at = 0;
  for (;;) {
    if (buffer.length - at < 2) break;
    const opcode = buffer[at]! & 0x0f;
    let length = buffer[at + 1]! & 0x7f;
    let offset = at + 2;
    if (length === 126) {
      if (buffer.length - at < 4) break;
      length = buffer.readUInt16BE(at + 2);
      offset = at + 4;
    } else if (length === 127) {
      if (buffer.length - at < 10) break;
      length = Number(buffer.readBigUInt64BE(at + 2));
      offset = at + 10;
    }
    if (buffer.length < offset + length) break;
    frames.push({ opcode, payload: buffer.subarray(offset, offset + length) });
    at = offset + length;
  }
  return { frames, rest: buffer.subarray(at) };
};

export interface RawFrames {
  /** Written in the same write as the upgrade request. */
  early?: Buffer[];
  /** Written once the 101 has come. */
  later?: Buffer[];
  /** Asked at each text frame of the server: what to write then. */
  onText?: (text: string) => Buffer[] | undefined;
}

/**
 * Opens `pathAndQuery` on the server with the upgrade request and `early` frames in one write,
 * sends the other frames as `frames` says, and resolves with what the server answered once it
 * sends its close frame (answered with ours) or ends the connection. Rejects after `ms`.
 */
export const rawWebSocket = (baseUrl: string, pathAndQuery: string, frames: RawFrames = {}, ms = SAFETY_NET_MS): Promise<RawOutcome> => openRawWebSocket(baseUrl, pathAndQuery, frames, ms).outcome;

/** rawWebSocket, with a way to write more frames while it is open. */
export const openRawWebSocket = (baseUrl: string, pathAndQuery: string, frames: RawFrames = {}, ms = SAFETY_NET_MS): { outcome: Promise<RawOutcome>; write: (frame: Buffer) => void } => {
  const url = new URL(baseUrl);
  const socket = netConnect({ host: url.hostname, port: Number(url.port) });
  const outcome = new Promise<RawOutcome>((resolve, reject) => {
    const result: RawOutcome = { status: 0, texts: [], code: undefined, reason: '' };
    let pending: Buffer = Buffer.alloc(0);
    let upgraded = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${ms} ms: ${JSON.stringify(result)}`));
    }, ms);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    socket.on('error', () => undefined); // the peer may reset: 'close' follows
    socket.on('close', finish);
    socket.on('connect', () => {
      const request = [
        `GET ${pathAndQuery} HTTP/1.1`,
        `Host: ${url.host}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        '',
        '',
      ].join('\r\n');
      socket.write(Buffer.concat([Buffer.from(request), ...(frames.early ?? [])]));
    });
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (!upgraded) {
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return;
        result.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(pending.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        pending = pending.subarray(end + 4);
        upgraded = true;
        if (result.status !== 101) return;
        for (const frame of frames.later ?? []) socket.write(frame);
      }
      const { frames: received, rest } = serverFrames(pending);
      pending = rest;
      for (const frame of received) {
        if (frame.opcode === OPCODE.text) {
          const text = frame.payload.toString('utf8');
          result.texts.push(text);
          for (const reply of frames.onText?.(text) ?? []) socket.write(reply);
        }
        if (frame.opcode === OPCODE.close) {
          result.code = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : undefined;
          result.reason = frame.payload.subarray(2).toString('utf8');
          clearTimeout(timer);
          resolve(result);
          socket.end(clientFrame(OPCODE.close, frame.payload.subarray(0, 2)));
          return;
        }
      }
    });
  });
  return { outcome, write: (frame) => void socket.write(frame) };
};
