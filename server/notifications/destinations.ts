// Where a notification may go (the SSRF guard). Slack, Discord and Telegram only at their own
// hosts; a generic webhook only over https to public addresses, judged after DNS resolution;
// NOTIFY_HOSTS adds hosts an operator trusts (the tests' local fakes), NOTIFY_ALLOW_PRIVATE=1
// lets webhooks reach private addresses and plain http. The answer carries the address judged,
// and the transport connects to that one (a second lookup could be answered otherwise: rebinding).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { TNotificationKind } from '../../contracts/notifications.ts';

export interface DestinationRules {
  /** NOTIFY_HOSTS: `host` (any port) or `host:port`, lower-case. */
  trustedHosts: readonly string[];
  /** NOTIFY_ALLOW_PRIVATE. */
  allowPrivate: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/** A destination the guard let through: the URL, and the address to connect to. */
export interface Destination {
  url: URL;
  address: ResolvedAddress;
}

/** Why a destination is refused: a message safe to show (it never quotes a URL's path or query). */
export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

/** The hosts each chat service's webhooks live at. */
const OWN_HOSTS: Partial<Record<TNotificationKind, readonly string[]>> = {
  slack: ['hooks.slack.com'],
  discord: ['discord.com', 'discordapp.com'],
  telegram: ['api.telegram.org'],
};

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: an IPv4 address behind it
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 address inside
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d, or its hex form), as the IPv4 address. */
const mappedV4 = (address: string): string | undefined => {
  const lower = address.toLowerCase();
  if (!lower.startsWith('::ffff:')) return undefined;
  const rest = lower.slice(7);
  if (isIP(rest) === 4) return rest;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
};

/** Whether an address is reachable on the public internet (not loopback, private, link-local, CGNAT, ...). */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const v4 = mappedV4(address);
    if (v4) return !NOT_PUBLIC.check(v4, 'ipv4');
    return !NOT_PUBLIC.check(address, 'ipv6');
  }
  return !NOT_PUBLIC.check(address, 'ipv4');
};

/** Every address of a name, as the system resolver gives them. */
export const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

const hostOf = (url: URL): string => url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
const portOf = (url: URL): string => url.port || (url.protocol === 'https:' ? '443' : '80');

const isTrusted = (url: URL, rules: DestinationRules): boolean => {
  // IPv6 entries are written as the URL writes them: [::1]:8080.
  const hostPort = `${url.hostname.toLowerCase()}:${portOf(url)}`;
  return rules.trustedHosts.some((entry) => entry === hostOf(url) || entry === url.hostname.toLowerCase() || entry === hostPort);
};

const parse = (text: string): URL => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DestinationRefused('is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DestinationRefused('must be an https URL');
  if (url.username || url.password) throw new DestinationRefused('must not carry a user name or password');
  return url;
};

/** The name's addresses, every one of them acceptable (one bad answer refuses the whole). */
const resolveChecked = async (url: URL, resolve: Resolve, mustBePublic: boolean): Promise<ResolvedAddress> => {
  const host = hostOf(url);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family !== 0) addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new DestinationRefused(`its host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(`its host ${host} does not resolve`);
  if (mustBePublic && addresses.some(({ address }) => !isPublicAddress(address))) {
    throw new DestinationRefused(`its host ${host} is not a public address (loopback, private, link-local and the like are refused)`);
  }
  return addresses[0]!;
};

/**
 * Judges where a channel of `kind` may send: the URL for webhook, Slack and Discord, the
 * Telegram API's sendMessage URL. Throws DestinationRefused with the reason.
 */
export const checkDestination = async ({ kind, url: text, rules, resolve = systemResolve }: { kind: TNotificationKind; url: string; rules: DestinationRules; resolve?: Resolve }): Promise<Destination> => {
  const url = parse(text);
  if (isTrusted(url, rules)) return { url, address: await resolveChecked(url, resolve, false) };
  const own = OWN_HOSTS[kind];
  if (own) {
    if (!own.includes(hostOf(url))) throw new DestinationRefused(`a ${kind} channel must be at ${own.join(' or ')}`);
    if (url.protocol !== 'https:') throw new DestinationRefused('must be an https URL');
    return { url, address: await resolveChecked(url, resolve, true) };
  }
  if (url.protocol !== 'https:' && !rules.allowPrivate) throw new DestinationRefused('must be an https URL');
  return { url, address: await resolveChecked(url, resolve, !rules.allowPrivate) };
};
