// The live confirm token as a value: 32 random bytes and their HMAC-SHA256 under
// LIVE_CONFIRM_SECRET, both base64url. Only the sha256 of the whole token is stored, so the
// database alone cannot produce a token, and the HMAC lets a forged or mistyped one be refused
// without a query.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'lct_';
/** Twelve hours, as the interface fixes it. */
export const CONFIRM_TOKEN_TTL_MS = 12 * 3_600_000;

const mac = (secret: string, nonce: string) => createHmac('sha256', secret).update(`live-confirm:${nonce}`).digest('base64url');

export const makeConfirmToken = (secret: string): string => {
  const nonce = randomBytes(32).toString('base64url');
  return `${PREFIX}${nonce}.${mac(secret, nonce)}`;
};

/** Whether the token carries a valid signature of this service (it may still be unknown, used or expired). */
export const isSignedConfirmToken = (secret: string, token: string): boolean => {
  if (!token.startsWith(PREFIX)) return false;
  const [nonce, signature, extra] = token.slice(PREFIX.length).split('.');
  if (!nonce || !signature || extra !== undefined) return false;
  const expected = Buffer.from(mac(secret, nonce));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
};

/** What is stored of a token. */
export const confirmTokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');
