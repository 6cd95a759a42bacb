// JWT access and refresh tokens: HS256 only, with sub, type, jti, iat, exp and the user's token
// version (`ver`), which lets a password change or a deactivation end every earlier token.
import { createSecretKey, randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';

export type TokenType = 'access' | 'refresh';

export interface VerifiedToken {
  userId: number;
  type: TokenType;
  jti: string;
  /** The user's token version when the token was issued. */
  version: number;
  /**
   * The session (refresh-token family): a refresh token's own, or the one an access token was
   * issued with. Access tokens issued before sessions were named in them carry none.
   */
  familyId: string | undefined;
  expiresAt: Date;
}

export interface TokenSubject {
  userId: number;
  version: number;
}

export interface TokenSigner {
  readonly accessTtlSec: number;
  readonly refreshTtlSec: number;
  /** `familyId`: the session the access token was issued with (GET /api/auth/sessions marks it current). */
  signAccess(subject: TokenSubject & { familyId: string }): Promise<string>;
  signRefresh(subject: TokenSubject & { jti: string; familyId: string }): Promise<string>;
  /** Throws AppError UNAUTHORIZED for anything but a valid, unexpired token of the expected type. */
  verify(token: string, expected: TokenType): Promise<VerifiedToken>;
}

const ALGORITHM = 'HS256';

/** Verified access tokens kept in memory; a bound on memory, not on correctness. */
const MAX_CACHED_TOKENS = 20_000;

export const createTokenSigner = (opts: { secret: string; accessTtlSec: number; refreshTtlDays: number; clock: Clock }): TokenSigner => {
  const { clock } = opts;
  // Imported once: jose would import a raw key on every sign and verify.
  const key = createSecretKey(Buffer.from(opts.secret, 'utf8'));
  // Access tokens are presented on every request: the signature of one exact token string is
  // checked once, then its claims come from here until it expires. Whether its user is still
  // active, and still at this token version, is not cached here: the caller compares them with
  // the user directory, which the change feed invalidates.
  const verifiedAccess = new Map<string, VerifiedToken>();
  const { accessTtlSec } = opts;
  const refreshTtlSec = opts.refreshTtlDays * 86_400;

  const sign = (claims: Record<string, string | number>, userId: number, jti: string, ttlSec: number) => {
    const now = Math.floor(clock.now().getTime() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(String(userId))
      .setJti(jti)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSec)
      .sign(key);
  };

  return {
    accessTtlSec,
    refreshTtlSec,
    signAccess: ({ userId, version, familyId }) => sign({ type: 'access', ver: version, fam: familyId }, userId, randomUUID(), accessTtlSec),
    signRefresh: ({ userId, version, jti, familyId }) => sign({ type: 'refresh', ver: version, fam: familyId }, userId, jti, refreshTtlSec),
    verify: async (token, expected) => {
      if (expected === 'access') {
        const hit = verifiedAccess.get(token);
        if (hit) {
          if (hit.expiresAt.getTime() > clock.now().getTime()) return hit;
          verifiedAccess.delete(token);
          throw new AppError('UNAUTHORIZED', 'Token expired');
        }
      }
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: [ALGORITHM],
          requiredClaims: ['sub', 'jti', 'exp', 'iat'],
          currentDate: clock.now(),
        }));
      } catch (error) {
        const expired = error instanceof joseErrors.JWTExpired;
        throw new AppError('UNAUTHORIZED', expired ? 'Token expired' : 'Invalid token');
      }
      const userId = Number(payload.sub);
      if (payload.type !== expected) throw new AppError('UNAUTHORIZED', `Not an ${expected} token`);
      if (!Number.isSafeInteger(userId) || userId < 1 || String(userId) !== payload.sub) {
        throw new AppError('UNAUTHORIZED', 'Invalid token');
      }
      const version = payload.ver;
      if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) throw new AppError('UNAUTHORIZED', 'Invalid token');
      const familyId = typeof payload.fam === 'string' ? payload.fam : undefined;
      if (expected === 'refresh' && !familyId) throw new AppError('UNAUTHORIZED', 'Invalid token');
      const verified: VerifiedToken = { userId, type: expected, jti: payload.jti!, version, familyId, expiresAt: new Date(payload.exp! * 1000) };
      if (expected === 'access') {
        if (verifiedAccess.size >= MAX_CACHED_TOKENS) verifiedAccess.delete(verifiedAccess.keys().next().value!);
        verifiedAccess.set(token, verified);
      }
      return verified;
    },
  };
};
