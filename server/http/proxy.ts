// Where a request comes from: the TRUST_PROXY setting, parsed once by config, and the walk
// through X-Forwarded-For that names the nearest hop no trusted proxy stands in for.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/**
 * Which proxies in front of us are believed:
 * - `off`: none; the client is the socket's peer and X-Forwarded-For is ignored.
 * - `hops`: exactly this many proxies, each appending the address it saw. With N trusted hops
 *   the client is the entry N positions from the right of `[...X-Forwarded-For, socket]`
 *   (the socket counts as position 0): N = 1 takes the entry our own proxy appended.
 * - `cidrs`: any peer inside these ranges is a proxy; walking leftwards from the socket, the
 *   first address outside them is the client.
 * In both walking modes a malformed entry stops the walk at the last good address (the proxy
 * that passed the junk on), and a chain that runs out yields its leftmost address.
 */
export type TrustProxy =
  | { readonly mode: 'off' }
  | { readonly mode: 'hops'; readonly hops: number }
  | { readonly mode: 'cidrs'; readonly trusted: BlockList; readonly ranges: readonly string[] };

export const TRUST_NONE: TrustProxy = { mode: 'off' };
export const MAX_TRUSTED_HOPS = 32;

const HOP_COUNT = /^[1-9][0-9]*$/;
const PREFIX = /^[0-9]{1,3}$/;
/** Longer than any IPv6 text with a port and a sane zone id: refused before any parsing. */
const MAX_ENTRY_LENGTH = 80;

const MAPPED_V4 = '::ffff:';

/** `::ffff:1.2.3.4` (how a dual-stack socket shows an IPv4 peer) as plain `1.2.3.4`. */
const unmapped = (address: string): string => {
  // Checked first so that the common IPv4 peer costs one comparison and no allocation.
  if (address.charCodeAt(0) !== 0x3a) return address;
  const tail = address.slice(MAPPED_V4.length);
  return address.slice(0, MAPPED_V4.length).toLowerCase() === MAPPED_V4 && isIP(tail) === 4 ? tail : address;
};

/**
 * One X-Forwarded-For entry as a bare address, or undefined when it is not one. Takes what
 * proxies write: `1.2.3.4`, `2001:db8::1`, and with a port `1.2.3.4:80` or `[2001:db8::1]:80`.
 */
export const addressOfEntry = (entry: string): string | undefined => {
  if (entry.length === 0 || entry.length > MAX_ENTRY_LENGTH) return undefined;
  let address = entry;
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    const rest = entry.slice(close + 1);
    if (close === -1 || (rest !== '' && !/^:[0-9]{1,5}$/.test(rest))) return undefined;
    address = entry.slice(1, close);
    if (isIP(address) !== 6) return undefined;
  } else {
    const colon = entry.indexOf(':');
    // One colon is IPv4 with a port; more is IPv6, which carries a port only in brackets.
    if (colon !== -1 && entry.indexOf(':', colon + 1) === -1) {
      if (!/^[0-9]{1,5}$/.test(entry.slice(colon + 1))) return undefined;
      address = entry.slice(0, colon);
      if (isIP(address) !== 4) return undefined;
    } else if (isIP(address) === 0) return undefined;
  }
  return unmapped(address);
};

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

const isTrusted = (trust: TrustProxy, address: string, hop: number): boolean => {
  switch (trust.mode) {
    case 'off':
      return false;
    case 'hops':
      return hop < trust.hops;
    case 'cidrs':
      return trust.trusted.check(address, familyOf(address));
  }
};

/**
 * The client address for a socket peer and the X-Forwarded-For value(s) that came with it.
 * Several X-Forwarded-For headers read as one list in order (node joins them with ', '). Walks
 * from the right without splitting the header, so a long forged list costs nothing unless
 * every entry in it is trusted.
 */
export const chooseClientAddress = (socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trust: TrustProxy): string => {
  let client = socketAddress === undefined ? 'unknown' : unmapped(socketAddress);
  if (trust.mode === 'off' || forwardedFor === undefined || socketAddress === undefined) return client;
  const header = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
  let end = header.length;
  for (let hop = 0; isTrusted(trust, client, hop); hop++) {
    if (end < 0) return client;
    const start = header.lastIndexOf(',', end - 1);
    const entry = addressOfEntry(header.slice(start + 1, end).trim());
    if (entry === undefined) return client;
    client = entry;
    end = start;
  }
  return client;
};

export const clientAddressOf = (req: IncomingMessage, trust: TrustProxy): string =>
  chooseClientAddress(req.socket.remoteAddress, trust.mode === 'off' ? undefined : req.headers['x-forwarded-for'], trust);

/** Parses TRUST_PROXY; a string is the reason it is not a valid value. */
export const parseTrustProxy = (value: string | undefined): TrustProxy | string => {
  const text = (value ?? '').trim();
  const lower = text.toLowerCase();
  if (lower === '' || lower === 'false' || lower === '0') return TRUST_NONE;
  if (lower === 'true') return { mode: 'hops', hops: 1 };
  if (HOP_COUNT.test(text)) {
    const hops = Number(text);
    return hops <= MAX_TRUSTED_HOPS ? { mode: 'hops', hops } : `a hop count must be 1 to ${MAX_TRUSTED_HOPS}`;
  }
  const trusted = new BlockList();
  const ranges: string[] = [];
  for (const item of text.split(',')) {
    const range = item.trim();
    if (range === '') continue;
    const slash = range.indexOf('/');
    const address = slash === -1 ? range : range.slice(0, slash);
    const family = isIP(address);
    const invalid = () =>
      `expected false, true, a hop count (1-${MAX_TRUSTED_HOPS}) or a comma list of IP addresses and CIDR ranges; "${range.slice(0, 60)}" is none of them`;
    if (family === 0) return invalid();
    if (slash === -1) {
      trusted.addAddress(address, family === 6 ? 'ipv6' : 'ipv4');
    } else {
      const prefix = range.slice(slash + 1);
      if (!PREFIX.test(prefix) || Number(prefix) > (family === 6 ? 128 : 32)) return invalid();
      trusted.addSubnet(address, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
    }
    ranges.push(range);
  }
  if (ranges.length === 0) return 'expected at least one address or range';
  return { mode: 'cidrs', trusted, ranges };
};

/** The config schema of TRUST_PROXY: a failed parse is an issue, which config reports by name. */
export const trustProxySetting = () =>
  z
    .string()
    .optional()
    .transform((value, ctx): TrustProxy => {
      const parsed = parseTrustProxy(value);
      if (typeof parsed !== 'string') return parsed;
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    });
