// Exchange keys at rest: AES-256-GCM round trips, fresh nonces, refusal under another secret or
// salt or after tampering, the masks, and the keyed api-key fingerprint.
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MASK_UNDECRYPTABLE, createKeyCipher, keyFingerprint, maskAccountNo, maskKey } from '../../server/keys/crypto.ts';

const SECRET = 'k'.repeat(24) + '-auth-secret-key-for-tests';
const SALT = 'an-encryption-salt-for-the-tests';
const API_KEY = 'PKTEST1234567890ABCD';

const cipher = createKeyCipher({ secret: SECRET, salt: SALT });

/** Flips one bit of one base64url part of a stored value. */
const tamper = (stored: string, partIndex: number): string => {
  const parts = stored.split(':');
  const bytes = Buffer.from(parts[partIndex] ?? '', 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[partIndex] = bytes.toString('base64url');
  return parts.join(':');
};

describe('createKeyCipher', () => {
  it('round-trips keys, secrets with any characters and the empty string', () => {
    for (const plain of [API_KEY, 'sEcReT/+=:with:colons', 'ключ-키-🔑', '']) {
      expect(cipher.decrypt(cipher.encrypt(plain))).toBe(plain);
    }
  });

  it('stores v1:<nonce>:<ciphertext>:<tag>, base64url, without the plain text', () => {
    const stored = cipher.encrypt(API_KEY);
    expect(stored).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$/);
    expect(stored).not.toContain(API_KEY);
    const [, nonce, ciphertext, tag] = stored.split(':');
    expect(Buffer.from(nonce ?? '', 'base64url')).toHaveLength(12);
    expect(Buffer.from(ciphertext ?? '', 'base64url')).toHaveLength(API_KEY.length);
    expect(Buffer.from(tag ?? '', 'base64url')).toHaveLength(16);
  });

  it('uses a fresh nonce for every value', () => {
    const values = Array.from({ length: 20 }, () => cipher.encrypt(API_KEY));
    expect(new Set(values).size).toBe(20);
    expect(new Set(values.map((value) => value.split(':')[1])).size).toBe(20);
  });

  it('decrypts with a cipher made again from the same secret and salt', () => {
    expect(createKeyCipher({ secret: SECRET, salt: SALT }).decrypt(cipher.encrypt(API_KEY))).toBe(API_KEY);
  });

  it('answers undefined under another salt or another secret', () => {
    const stored = cipher.encrypt(API_KEY);
    expect(createKeyCipher({ secret: SECRET, salt: `${SALT}-rotated` }).decrypt(stored)).toBeUndefined();
    expect(createKeyCipher({ secret: `${SECRET}-rotated`, salt: SALT }).decrypt(stored)).toBeUndefined();
  });

  it('answers undefined when the nonce, the ciphertext or the tag was altered', () => {
    const stored = cipher.encrypt(API_KEY);
    for (const part of [1, 2, 3]) expect(cipher.decrypt(tamper(stored, part))).toBeUndefined();
  });

  it('answers undefined for values that are not ours', () => {
    const [, nonce, ciphertext, tag] = cipher.encrypt(API_KEY).split(':');
    for (const stored of ['', API_KEY, `v2:${nonce}:${ciphertext}:${tag}`, `v1:${nonce}:${ciphertext}`, `v1:${nonce}:${ciphertext}:${tag}:x`, `v1:${nonce}:${ciphertext}:${tag}!`, `v1:AAAA:${ciphertext}:${tag}`, `v1:${nonce}:${ciphertext}:AAAA`]) {
      expect(cipher.decrypt(stored)).toBeUndefined();
    }
  });

  it('refuses an empty secret or salt', () => {
    expect(() => createKeyCipher({ secret: '', salt: SALT })).toThrow(/secret/);
    expect(() => createKeyCipher({ secret: SECRET, salt: '' })).toThrow(/salt/);
  });
});

describe('maskKey', () => {
  it('shows the first 4 and last 4 characters of a key of 9 or more', () => {
    expect(maskKey(API_KEY)).toBe('PKTE...ABCD');
    expect(maskKey('abcdefghi')).toBe('abcd...fghi');
  });

  it('shows at most half of a shorter key, and nothing of one under 4 characters', () => {
    expect(maskKey('abcdefgh')).toBe('ab...gh');
    expect(maskKey('abcde')).toBe('a...e');
    expect(maskKey('abcd')).toBe('a...d');
    expect(maskKey('abc')).toBe('...');
    expect(maskKey('')).toBe('...');
  });

  it('has a distinct mask for a key that no longer decrypts', () => {
    expect(MASK_UNDECRYPTABLE).toBe('****');
  });
});

describe('maskAccountNo', () => {
  it('stars all but the last 4 digits and keeps separators', () => {
    expect(maskAccountNo('12345678-01')).toBe('******78-01');
    expect(maskAccountNo('5001234501')).toBe('******4501');
  });

  it('shows at most half of a short number', () => {
    expect(maskAccountNo('123456')).toBe('***456');
    expect(maskAccountNo('123')).toBe('**3');
    expect(maskAccountNo('1')).toBe('*');
  });
});

describe('keyFingerprint', () => {
  it('is a stable HMAC-SHA256 hex that does not contain the key', () => {
    const fingerprint = keyFingerprint(API_KEY, SECRET);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(keyFingerprint(API_KEY, SECRET)).toBe(fingerprint);
    expect(fingerprint).not.toContain(API_KEY.toLowerCase());
  });

  it('differs for another key and under another secret', () => {
    const fingerprint = keyFingerprint(API_KEY, SECRET);
    expect(keyFingerprint(`${API_KEY}X`, SECRET)).not.toBe(fingerprint);
    expect(keyFingerprint(API_KEY, `${SECRET}-rotated`)).not.toBe(fingerprint);
  });

  it('is keyed: not the plain SHA-256 or an HMAC under the secret itself', () => {
    const fingerprint = keyFingerprint(API_KEY, SECRET);
    expect(fingerprint).not.toBe(createHash('sha256').update(API_KEY).digest('hex'));
    expect(fingerprint).not.toBe(createHmac('sha256', SECRET).update(API_KEY).digest('hex'));
  });
});
