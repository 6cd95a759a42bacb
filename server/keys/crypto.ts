// Exchange keys at rest: AES-256-GCM under a key derived from AUTH_SECRET_KEY and
// ENCRYPTION_SALT, the masks shown in place of a key, and a keyed fingerprint to find duplicates.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
// 96-bit nonces are GCM's native size; random ones are safe for far more values than a user
// table will ever hold under one key (the bound is about 2^32 encryptions).
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
// Distinct info strings give the cipher and the fingerprint independent keys from one secret,
// and let a future v2 derive a fresh key without touching the secret.
const CIPHER_INFO = 'trading-service/exchange-keys/aes-256-gcm/v1';
const FINGERPRINT_INFO = 'trading-service/exchange-keys/api-key-fingerprint/v1';
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** What the API shows for a stored key that no longer decrypts. */
export const MASK_UNDECRYPTABLE = '****';

export interface KeyCipher {
  /** `v1:<nonce>:<ciphertext>:<tag>`, each part base64url; a fresh nonce every call. */
  encrypt(plain: string): string;
  /** The plain text, or undefined when the value does not decrypt (other secret or salt, tampering, not ours). */
  decrypt(stored: string): string | undefined;
}

const deriveKey = (secret: string, salt: string, info: string): Buffer => {
  if (secret.length === 0) throw new Error('the key-encryption secret must not be empty');
  return Buffer.from(hkdfSync('sha256', secret, salt, info, KEY_BYTES));
};

const decodePart = (part: string): Buffer | undefined => (BASE64URL.test(part) ? Buffer.from(part, 'base64url') : undefined);

export const createKeyCipher = ({ secret, salt }: { secret: string; salt: string }): KeyCipher => {
  if (salt.length === 0) throw new Error('the key-encryption salt must not be empty');
  const key = deriveKey(secret, salt, CIPHER_INFO);
  return {
    encrypt(plain) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const encoded = [nonce, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'));
      return [VERSION, ...encoded].join(':');
    },
    decrypt(stored) {
      const parts = stored.split(':');
      if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
      const [nonce, ciphertext, tag] = parts.slice(1).map(decodePart);
      if (!nonce || !ciphertext || !tag || nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        // final() throws when the tag does not verify: a wrong key or altered bytes, alike to us.
        return undefined;
      }
    },
  };
};

/**
 * A stable, secret-keyed fingerprint of an api key (HMAC-SHA256, hex), stored beside the
 * ciphertext so "this api_key is already held by another user" is one indexed lookup, with no
 * clear key in the database and no brute force possible without the secret. The key is taken as
 * given: trimming or other normalisation is the request validation's job.
 */
export const keyFingerprint = (apiKey: string, secret: string): string =>
  createHmac('sha256', deriveKey(secret, '', FINGERPRINT_INFO)).update(apiKey, 'utf8').digest('hex');

/**
 * First 4, `...`, last 4 characters, as the interface shows keys. A key shorter than 9 cannot
 * show 4 + 4 without showing all of it, so it shows a quarter of its length from each end (never
 * more than half in all), and nothing but `...` below 4 characters.
 */
export const maskKey = (plain: string): string => {
  const chars = Array.from(plain);
  const shown = chars.length >= 9 ? 4 : Math.floor(chars.length / 4);
  if (shown === 0) return '...';
  return `${chars.slice(0, shown).join('')}...${chars.slice(-shown).join('')}`;
};

/**
 * An account number with all but its last 4 digits or letters starred, separators kept so the
 * shape stays recognisable (`12345678-01` → `******78-01`); a short one shows at most half.
 */
export const maskAccountNo = (plain: string): string => {
  const chars = Array.from(plain);
  const significant = chars.filter((char) => /[\p{L}\p{N}]/u.test(char)).length;
  let toShow = Math.min(4, Math.floor(significant / 2));
  const masked: string[] = [];
  for (let index = chars.length - 1; index >= 0; index -= 1) {
    const char = chars[index] ?? '';
    if (!/[\p{L}\p{N}]/u.test(char)) masked.push(char);
    else if (toShow > 0) {
      masked.push(char);
      toShow -= 1;
    } else masked.push('*');
  }
  return masked.reverse().join('');
};
