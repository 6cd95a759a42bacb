// Personal API keys (DESIGN §6 "Integrations"): created with scopes and shown once, kept as a
// hash, listed, revoked; a bearer credential that starts with `tsk_` is resolved here to its user
// and scopes. A key is read from the database at each use, so a revocation ends it on every
// instance at once; a password change or a deactivation revokes the user's keys in its own
// transaction (revokeApiKeys without an id), and a deactivated user's key is refused besides.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_PREFIX, type TApiKey, type TApiKeyCreate, type TApiKeyScope } from '../../contracts/auth.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { AuthUser, Users } from '../users/users.ts';
import type { ChangeFeed } from '../events/changes.ts';
import { findApiKeyByHash, findApiKeyById, insertApiKey, listApiKeys, revokeApiKeys, touchApiKey, type ApiKeyRow } from './queries.ts';

/** The secret's random part: 32 bytes, base64url. */
const SECRET_BYTES = 32;
/** Characters of the secret kept to tell keys apart (`tsk_` and four of the random part). */
const PREFIX_LENGTH = API_KEY_PREFIX.length + 4;
/** A key's use is written at most once a minute; each instance also skips the write within it. */
const TOUCH_EVERY_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

export const isApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX);

const keyOf = (row: ApiKeyRow): TApiKey => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes as TApiKeyScope[],
  created_at: row.createdAt.toISOString(),
  expires_at: row.expiresAt?.toISOString() ?? null,
  last_used_at: row.lastUsedAt?.toISOString() ?? null,
});

/** What a key resolves to: its user and what it may do. */
export interface KeyCaller {
  user: AuthUser;
  keyId: string;
  scopes: ReadonlySet<TApiKeyScope>;
}

/** The end of a key that does not expire, for a channel that lives no longer than its credential. */
const NEVER = new Date('9999-12-31T00:00:00.000Z');

export const createApiKeys = ({ db, clock, users, changes }: { db: Db; clock: Clock; users: Pick<Users, 'get'>; changes: Pick<ChangeFeed, 'publish'> }) => {
  /** Per key, when this instance last wrote its use. */
  const touched = new Map<string, number>();

  const create = async ({ user, input, origin }: { user: { id: number }; input: TApiKeyCreate; origin: RequestOrigin }) => {
    const at = clock.now();
    const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
    if (expiresAt && expiresAt <= at) throw new AppError('VALIDATION_ERROR', 'expires_at: must be in the future', { errors: [{ path: 'expires_at', message: 'must be in the future' }] });
    const secret = `${API_KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
    const row = await db.transaction(async (tx) => {
      const made = await insertApiKey(tx, { id: randomUUID(), userId: user.id, name: input.name, prefix: secret.slice(0, PREFIX_LENGTH), secretHash: hashOf(secret), scopes: input.scopes, createdAt: at, expiresAt });
      await recordAudit(tx, { action: 'auth.api_key_created', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { api_key_id: made.id, name: made.name, scopes: input.scopes } });
      return made;
    });
    return { ...keyOf(row), key: secret };
  };

  const list = async ({ user }: { user: { id: number } }) => ({ items: (await listApiKeys(db, user.id)).map(keyOf) });

  /** 404 for a key the user does not have (another user's, or one already revoked). */
  const revoke = async ({ user, id, origin }: { user: { id: number }; id: string; origin: RequestOrigin }): Promise<void> => {
    // Key ids are UUIDs: anything else names no key (and must not reach the uuid column).
    if (!UUID.test(id)) throw new AppError('NOT_FOUND', `No API key ${id.slice(0, 64)}`);
    const at = clock.now();
    await db.transaction(async (tx) => {
      const [revoked] = await revokeApiKeys(tx, { userId: user.id, id, reason: 'revoked', at });
      if (!revoked) throw new AppError('NOT_FOUND', `No API key ${id.slice(0, 64)}`);
      await recordAudit(tx, { action: 'auth.api_key_revoked', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { api_key_id: revoked } });
      // Every instance checks the user's open channels again: one this key opened ends.
      await changes.publish(tx, { kind: 'user', id: user.id });
    });
    touched.delete(id);
  };

  /** The caller behind a key's secret, or 401: unknown, revoked, expired, or its user deactivated. */
  const authenticate = async (secret: string): Promise<KeyCaller> => {
    const row = await findApiKeyByHash(db, hashOf(secret));
    const at = clock.now();
    if (!row || row.revokedAt) throw new AppError('UNAUTHORIZED', 'Invalid API key');
    if (row.expiresAt && row.expiresAt <= at) throw new AppError('UNAUTHORIZED', 'API key expired');
    const user = await users.get(row.userId);
    if (!user?.isActive) throw new AppError('UNAUTHORIZED', 'Account is deactivated');
    const last = touched.get(row.id);
    if (last === undefined || at.getTime() - last >= TOUCH_EVERY_MS) {
      touched.set(row.id, at.getTime());
      await touchApiKey(db, { id: row.id, at });
    }
    return { user, keyId: row.id, scopes: new Set(row.scopes as TApiKeyScope[]) };
  };

  /**
   * A channel's caller (the WebSocket channels and /trpc's socket): a key with the read scope, the
   * channel living no longer than the key's expiry. 401 otherwise, as for a bad token.
   */
  const channelCaller = async (secret: string) => {
    const caller = await authenticate(secret);
    if (!caller.scopes.has('read')) throw new AppError('UNAUTHORIZED', 'This API key lacks the read scope the channels need');
    const row = await findApiKeyByHash(db, hashOf(secret));
    return { user: caller.user, expiresAt: row?.expiresAt ?? NEVER, keyId: caller.keyId };
  };

  /** Whether a key still works (not revoked, not expired): a channel it opened is checked with it. */
  const stillValid = async (keyId: string): Promise<boolean> => {
    const row = await findApiKeyById(db, keyId);
    return row !== undefined && row.revokedAt === null && (row.expiresAt === null || row.expiresAt > clock.now());
  };

  return { create, list, revoke, authenticate, channelCaller, stillValid };
};

export type ApiKeys = ReturnType<typeof createApiKeys>;
