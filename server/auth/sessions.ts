// A user's sessions (refresh-token families) as the user manages them: the live ones listed with
// which is current (the one the caller's access token was issued with), one ended, or every one
// but the current. Each revocation is one transaction with its audit record; a revoked family's
// refresh token then fails as any revoked one does (auth.ts refresh). Access tokens already issued
// in it run out on their own (AUTH_ACCESS_TOKEN_TTL_MIN), as after a logout.
import type { TOtherSessionsRevoked, TSessionList, TSessionListQuery } from '../../contracts/auth.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { listLiveSessions, lockSession, revokeSessions } from './queries.ts';

export type Sessions = ReturnType<typeof createSessions>;

/** The caller: a user, and the session its access token names (undefined for an older token). */
interface Caller {
  user: { id: number };
  currentSessionId: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const sessionNotFound = () => new AppError('NOT_FOUND', 'Session not found');

export const createSessions = ({ db, clock }: { db: Db; clock: Clock }) => {
  const list = async ({ user, currentSessionId, query }: Caller & { query: TSessionListQuery }): Promise<TSessionList> => {
    const { rows, total } = await listLiveSessions(db, { userId: user.id, at: clock.now(), page: query.page, size: query.size });
    return {
      items: rows.map((row) => ({
        id: row.id,
        created_at: row.createdAt.toISOString(),
        last_used_at: (row.lastUsedAt ?? row.createdAt).toISOString(),
        expires_at: (row.expiresAt ?? row.createdAt).toISOString(),
        current: row.id === currentSessionId,
      })),
      total,
      page: query.page,
      size: query.size,
    };
  };

  /** Ends one of the caller's sessions (the current one too); a missing, ended or another user's is 404. */
  const revoke = async ({ user, currentSessionId, sessionId, origin }: Caller & { sessionId: string; origin: RequestOrigin }): Promise<void> => {
    // Not a UUID: no session has that id (and the uuid column would refuse the comparison).
    if (!UUID.test(sessionId)) throw sessionNotFound();
    const familyId = sessionId.toLowerCase();
    await db.transaction(async (tx) => {
      const session = await lockSession(tx, { familyId, userId: user.id });
      if (!session || session.revokedAt) throw sessionNotFound();
      const at = clock.now();
      await revokeSessions(tx, { userId: user.id, familyId, reason: 'revoked', at });
      await recordAudit(tx, { action: 'auth.session_revoked', actorUserId: user.id, subjectUserId: user.id, origin, data: { family_id: familyId, current: familyId === currentSessionId }, at });
    });
  };

  /** Ends every session of the caller but the current one; 409 when the access token names none. */
  const revokeOthers = async ({ user, currentSessionId, origin }: Caller & { origin: RequestOrigin }): Promise<TOtherSessionsRevoked> => {
    if (!currentSessionId) throw new AppError('CONFLICT', 'This access token names no session: refresh it, then try again');
    const revoked = await db.transaction(async (tx) => {
      const at = clock.now();
      const ids = await revokeSessions(tx, { userId: user.id, exceptFamilyId: currentSessionId, reason: 'revoked_others', at });
      await recordAudit(tx, { action: 'auth.sessions_revoked_others', actorUserId: user.id, subjectUserId: user.id, origin, data: { kept: currentSessionId, family_ids: ids }, at });
      return ids.length;
    });
    return { revoked, kept: currentSessionId };
  };

  return { list, revoke, revokeOthers };
};
