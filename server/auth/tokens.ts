// JWT access and refresh tokens: HS256 only, with sub, type, jti, iat and exp.
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../errors.ts';

export type TokenType = 'access' | 'refresh';

export interface VerifiedToken {
  userId: number;
  type: TokenType;
  jti: string;
  /** Refresh tokens only: the rotation family. */
  familyId: string | undefined;
  expiresAt: Date;
}

export interface TokenSigner {
  readonly accessTtlSec: number;
  readonly refreshTtlSec: number;
  signAccess(userId: number): Promise<string>;
  signRefresh(userId: number, jti: string, familyId: string): Promise<string>;
  /** Throws AppError UNAUTHORIZED for anything but a valid, unexpired token of the expected type. */
  verify(token: string, expected: TokenType): Promise<VerifiedToken>;
}

const ALGORITHM = 'HS256';

export const createTokenSigner = (opts: { secret: string; accessTtlMin: number; refreshTtlDays: number }): TokenSigner => {
  const key = new TextEncoder().encode(opts.secret);
  const accessTtlSec = opts.accessTtlMin * 60;
  const refreshTtlSec = opts.refreshTtlDays * 86_400;

  const sign = (claims: Record<string, string>, userId: number, jti: string, ttlSec: number) => {
    const now = Math.floor(Date.now() / 1000);
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
    signAccess: (userId) => sign({ type: 'access' }, userId, randomUUID(), accessTtlSec),
    signRefresh: (userId, jti, familyId) => sign({ type: 'refresh', fam: familyId }, userId, jti, refreshTtlSec),
    verify: async (token, expected) => {
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM], requiredClaims: ['sub', 'jti', 'exp', 'iat'] }));
      } catch (error) {
        const expired = error instanceof joseErrors.JWTExpired;
        throw new AppError('UNAUTHORIZED', expired ? 'Token expired' : 'Invalid token');
      }
      const userId = Number(payload.sub);
      if (payload.type !== expected) throw new AppError('UNAUTHORIZED', `Not an ${expected} token`);
      if (!Number.isSafeInteger(userId) || userId < 1 || String(userId) !== payload.sub) {
        throw new AppError('UNAUTHORIZED', 'Invalid token');
      }
      const familyId = typeof payload.fam === 'string' ? payload.fam : undefined;
      if (expected === 'refresh' && !familyId) throw new AppError('UNAUTHORIZED', 'Invalid token');
      return { userId, type: expected, jti: payload.jti!, familyId, expiresAt: new Date(payload.exp! * 1000) };
    },
  };
};
