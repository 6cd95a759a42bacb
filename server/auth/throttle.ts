// Throttling of unauthenticated work, kept in the database so it holds across API instances.
// Each scope has its limit: `max` attempts on one key within its window, after which further
// attempts answer 429 with Retry-After until the window ends (for login even with the right
// password). An attempt is counted before the work it guards (the password check, the hash),
// and given back or forgotten when it proves not to be a failure, so parallel attempts cannot
// slip past the limit between a check and a write.
import { isIP } from 'node:net';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db, Queryable } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { claimAttempt, clearAttempts, releaseAttempt, throttleWindowStart, type ThrottleKey, type ThrottleScope } from './queries.ts';

export type { ThrottleKey, ThrottleScope };

/** REGISTER_MAX_PER_HOUR's window. */
export const REGISTER_WINDOW_MS = 3_600_000;

export interface ThrottleLimit {
  max: number;
  windowMs: number;
  /** What a refusal says. */
  message: string;
}

export interface Throttle {
  /** Counts an attempt on the key, or throws 429 RATE_LIMIT_EXCEEDED with Retry-After. */
  admit(key: ThrottleKey): Promise<void>;
  /**
   * Counts an attempt on every key, in order, or counts none: when one refuses, those already
   * counted are given back and its 429 is thrown.
   */
  admitAll(keys: readonly ThrottleKey[]): Promise<void>;
  /** Gives back one attempt counted on each key (it was not a failure). */
  release(db: Queryable, keys: readonly ThrottleKey[]): Promise<void>;
  /** Forgets the key's failures (a proven password), inside the caller's transaction. */
  reset(tx: Queryable, key: ThrottleKey): Promise<void>;
}

/**
 * The address a per-address limit counts under: an IPv4 address as it is, an IPv6 address by
 * its /64 (one subscriber's usual allocation, so rotating addresses inside it buys nothing).
 */
export const addressBucket = (address: string): string => {
  if (isIP(address) !== 6) return address;
  const expanded = expandIPv6(address);
  return expanded ? `${expanded.slice(0, 4).join(':')}::/64` : address;
};

/** The eight groups of an IPv6 address, lower-case without leading zeros; undefined when it is not one. */
const expandIPv6 = (address: string): string[] | undefined => {
  const zone = address.indexOf('%');
  let text = (zone === -1 ? address : address.slice(0, zone)).toLowerCase();
  // A dotted IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - front.length - back.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...front, ...Array.from({ length: missing }, () => '0'), ...back].map((group) => Number.parseInt(group, 16).toString(16));
};

/** Each scope's limit, from the settings. */
export const throttleLimits = (
  config: Pick<Config, 'LOGIN_MAX_FAILURES' | 'LOGIN_WINDOW_MIN' | 'LOGIN_MAX_FAILURES_PER_ADDRESS' | 'REGISTER_MAX_PER_HOUR'>,
): Record<ThrottleScope, ThrottleLimit> => {
  const loginWindowMs = config.LOGIN_WINDOW_MIN * 60_000;
  const failures = { max: config.LOGIN_MAX_FAILURES, windowMs: loginWindowMs, message: 'Too many failed attempts; try again later' };
  return {
    login: failures,
    password: failures,
    login_address: { max: config.LOGIN_MAX_FAILURES_PER_ADDRESS, windowMs: loginWindowMs, message: 'Too many failed logins from this address; try again later' },
    register: { max: config.REGISTER_MAX_PER_HOUR, windowMs: REGISTER_WINDOW_MS, message: 'Too many registrations from this address; try again later' },
  };
};

export const createThrottle = ({ db, clock, limits }: { db: Db; clock: Clock; limits: Record<ThrottleScope, ThrottleLimit> }): Throttle => {
  const admit = async (key: ThrottleKey) => {
    const { max, windowMs, message } = limits[key.scope];
    const at = clock.now();
    const windowStart = new Date(at.getTime() - windowMs);
    if (await claimAttempt(db, { ...key, at, windowStart, max })) return;
    const startedAt = (await throttleWindowStart(db, key)) ?? at;
    const retryAfterSec = Math.max(1, Math.ceil((startedAt.getTime() + windowMs - at.getTime()) / 1000));
    throw new AppError('RATE_LIMIT_EXCEEDED', message, { retryAfterSec });
  };
  const release = async (on: Queryable, keys: readonly ThrottleKey[]) => {
    for (const key of keys) await releaseAttempt(on, key);
  };
  return {
    admit,
    admitAll: async (keys) => {
      for (const [index, key] of keys.entries()) {
        try {
          await admit(key);
        } catch (error) {
          await release(db, keys.slice(0, index));
          throw error;
        }
      }
    },
    release,
    reset: (tx, key) => clearAttempts(tx, key),
  };
};
