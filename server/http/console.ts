// GET /app/: the web console's built files (client/console, written by `npm run build`), with
// its cache, CSP and traversal rules. Not behind the halt switch: an operator lifts a halt from it.
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { errorBody, sendError } from './io.ts';

export const CONSOLE_PREFIX = '/app';
/** What logs and metrics call every request under /app/: one series, whatever the file. */
export const CONSOLE_ROUTE = '/app/';
const ALLOW = 'GET, HEAD';
const INDEX = 'index.html';
/** Vite names the files under assets/ by their content hash, so they never change. */
const HASHED_DIR = 'assets/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** A Host header as it may appear in a CSP source (anything else falls back to 'self' alone). */
const SANE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * No inline script or style anywhere; the console talks only to its own origin, over HTTP and
 * over the WebSocket channels (named with ws:/wss: because older engines do not count them as 'self').
 */
export const contentSecurityPolicy = (host: string | undefined): string => {
  const sockets = host && SANE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${sockets}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
};

/**
 * The file a path under /app/ names, relative to the console's directory; undefined when it
 * is malformed or would leave the directory (`..`, an encoded `%2e%2e`, a backslash, a NUL).
 */
export const consoleFileOf = (pathname: string): string | undefined => {
  let relative: string;
  try {
    relative = decodeURIComponent(pathname.slice(CONSOLE_PREFIX.length + 1));
  } catch {
    return undefined;
  }
  if (relative.includes('\0') || relative.includes('\\')) return undefined;
  const segments = relative.split('/');
  if (segments.some((segment) => segment === '..' || segment === '.')) return undefined;
  return relative === '' ? INDEX : relative;
};

const isFile = async (file: string) => {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
};

export interface ConsoleFiles {
  /** Answers a request under /app (the caller has checked the prefix). */
  serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void>;
}

export const createConsoleFiles = ({ dir }: { dir: string }): ConsoleFiles => {
  const root = path.resolve(dir);
  const indexFile = path.join(root, INDEX);

  const send = async (req: IncomingMessage, res: ServerResponse, file: string, cacheControl: string) => {
    const body = await readFile(file);
    res.statusCode = 200;
    res.setHeader('Content-Type', TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
    res.setHeader('Content-Length', body.length);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(req.headers.host));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // node:http leaves the body out of a HEAD response by itself; the headers stay.
    res.end(body);
  };

  const serve: ConsoleFiles['serve'] = async (req, res, pathname) => {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      res.setHeader('Allow', ALLOW);
      sendError(res, errorBody('METHOD_NOT_ALLOWED', `${method.slice(0, 16)} is not allowed here; allowed: ${ALLOW}`));
      return;
    }
    if (pathname === CONSOLE_PREFIX) {
      res.statusCode = 308;
      res.setHeader('Location', `${CONSOLE_PREFIX}/`);
      res.end();
      return;
    }
    const relative = consoleFileOf(pathname);
    const file = relative === undefined ? undefined : path.join(root, relative);
    if (file === undefined || (file !== root && !file.startsWith(root + path.sep))) {
      sendError(res, errorBody('NOT_FOUND', 'No such file of the web console'));
      return;
    }
    if (!(await isFile(indexFile))) {
      sendError(res, errorBody('NOT_FOUND', 'The web console is not built: run `npm run build`, then reload'));
      return;
    }
    if (relative !== INDEX && (await isFile(file))) {
      await send(req, res, file, relative!.startsWith(HASHED_DIR) ? 'public, max-age=31536000, immutable' : 'no-cache');
      return;
    }
    // A console route (/app/orders) is the page itself; a missing file with an extension is not.
    if (relative === INDEX || !path.posix.basename(relative!).includes('.')) {
      await send(req, res, indexFile, 'no-cache');
      return;
    }
    sendError(res, errorBody('NOT_FOUND', 'No such file of the web console'));
  };

  return { serve };
};
