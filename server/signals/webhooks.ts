// A user's signal webhooks (DESIGN §6 "Integrations"): made with their token shown once and kept
// as a SHA-256 hash (as personal API keys are), listed without it, rotated (the old token finds
// nothing at once, on every instance: each call reads the hook by its token's hash), removed. A
// hook's token places orders as its user: making or rotating a live hook asks a personal API key
// for the live scope besides trade, as a live order does.
import { randomBytes, randomUUID } from 'node:crypto';
import { SIGNAL_HOOK_PATH, type TSignalWebhook, type TSignalWebhookCreate, type TSignalWebhookCreated, type TSignalWebhookList } from '../../contracts/signals.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { SignalWebhookRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import { passphraseHashOf, sha256Hex } from './payload.ts';
import { findOwnedWebhook, insertWebhook, listWebhooks, removeWebhook, rotateWebhookToken } from './queries.ts';

/** A token's mark, so that a secret scanner (and a reader) can tell it; 32 random bytes follow. */
const TOKEN_PREFIX = 'wh_';
const TOKEN_BYTES = 32;
/** Characters of the token kept to tell hooks apart. */
const SHOWN_LENGTH = TOKEN_PREFIX.length + 4;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const tokenHashOf = sha256Hex;

const newToken = () => {
  const token = `${TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
  return { token, tokenHash: tokenHashOf(token), tokenPrefix: token.slice(0, SHOWN_LENGTH) };
};

const webhookOf = (row: SignalWebhookRow): TSignalWebhook => ({
  id: row.id,
  name: row.name,
  asset_class: row.assetClass,
  mode: row.mode,
  max_lag_sec: row.maxLagSec,
  has_passphrase: row.passphraseHash !== null,
  token_prefix: row.tokenPrefix,
  created_at: row.createdAt.toISOString(),
  rotated_at: row.rotatedAt?.toISOString() ?? null,
});

const withToken = (row: SignalWebhookRow, token: string): TSignalWebhookCreated => ({ ...webhookOf(row), token, url: `${SIGNAL_HOOK_PATH}${token}` });

const notFound = (id: string) => new AppError('NOT_FOUND', `No signal webhook ${id.slice(0, 64)}`);

/** The caller of a change: the user, where from, and whether its credential may trade live (a key without the live scope may not). */
export interface WebhookCaller {
  user: { id: number };
  origin: RequestOrigin;
  liveAllowed: boolean;
}

const requireLive = (mode: 'paper' | 'live', liveAllowed: boolean) => {
  if (mode === 'live' && !liveAllowed) throw new AppError('FORBIDDEN', 'This API key lacks the live scope a live hook needs');
};

export const createWebhooks = ({ db, clock }: { db: Db; clock: Clock }) => {
  const create = async ({ user, origin, liveAllowed, input }: WebhookCaller & { input: TSignalWebhookCreate }): Promise<TSignalWebhookCreated> => {
    requireLive(input.mode, liveAllowed);
    const at = clock.now();
    const id = randomUUID();
    const { token, tokenHash, tokenPrefix } = newToken();
    const row = await db.transaction(async (tx) => {
      const made = await insertWebhook(tx, {
        id,
        userId: user.id,
        name: input.name,
        assetClass: input.asset_class,
        mode: input.mode,
        maxLagSec: input.max_lag_sec,
        tokenHash,
        tokenPrefix,
        passphraseHash: input.passphrase === undefined ? null : passphraseHashOf(id, input.passphrase),
        createdAt: at,
      });
      await recordAudit(tx, { action: 'signal.webhook_created', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { webhook_id: id, name: made.name, asset_class: made.assetClass, mode: made.mode } });
      return made;
    });
    return withToken(row, token);
  };

  const list = async ({ user }: { user: { id: number } }): Promise<TSignalWebhookList> => ({ items: (await listWebhooks(db, user.id)).map(webhookOf) });

  /** A new token for one of the user's hooks; the old one is 404 from this commit on. */
  const rotate = async ({ user, origin, liveAllowed, id }: WebhookCaller & { id: string }): Promise<TSignalWebhookCreated> => {
    // Hook ids are UUIDs: anything else names no hook (and must not reach the uuid column).
    if (!UUID.test(id)) throw notFound(id);
    const at = clock.now();
    const { token, tokenHash, tokenPrefix } = newToken();
    const row = await db.transaction(async (tx) => {
      const hook = await findOwnedWebhook(tx, { userId: user.id, id });
      if (!hook) throw notFound(id);
      requireLive(hook.mode, liveAllowed);
      const rotated = await rotateWebhookToken(tx, { userId: user.id, id, tokenHash, tokenPrefix, at });
      if (!rotated) throw notFound(id);
      await recordAudit(tx, { action: 'signal.webhook_rotated', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { webhook_id: id } });
      return rotated;
    });
    return withToken(row, token);
  };

  /** Removes one of the user's hooks: its token finds nothing from this commit on; its signals stay listed. */
  const remove = async ({ user, origin, id }: Omit<WebhookCaller, 'liveAllowed'> & { id: string }): Promise<void> => {
    if (!UUID.test(id)) throw notFound(id);
    const at = clock.now();
    await db.transaction(async (tx) => {
      const removed = await removeWebhook(tx, { userId: user.id, id, at });
      if (!removed) throw notFound(id);
      await recordAudit(tx, { action: 'signal.webhook_removed', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { webhook_id: id } });
    });
  };

  return { create, list, rotate, remove };
};

export type Webhooks = ReturnType<typeof createWebhooks>;
