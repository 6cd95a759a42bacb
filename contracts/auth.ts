// Wire shapes of /api/auth: registration, login, token rotation, the current user.
import { z } from 'zod';
import { pageOf, requestText, storableText, ZPageQuery, ZTimestamp } from './common.ts';

export const ZUserRole = z.enum(['user', 'admin']);
export type TUserRole = z.infer<typeof ZUserRole>;

export const ZUsername = requestText()
  .min(3)
  .max(64)
  .regex(/^[a-zA-Z0-9_]+$/, 'only letters, digits and underscores');
export const ZPassword = requestText().min(8).max(128);

export const ZUserRegister = z.object({
  username: ZUsername,
  email: storableText(z.email().max(254)),
  password: ZPassword,
});
export type TUserRegister = z.infer<typeof ZUserRegister>;

export const ZUserLogin = z.object({
  username: requestText().min(1).max(254),
  password: requestText().min(1).max(1024),
});
export type TUserLogin = z.infer<typeof ZUserLogin>;

export const ZTokenRefresh = z.object({
  refresh_token: requestText().min(1).max(4096),
});
export type TTokenRefresh = z.infer<typeof ZTokenRefresh>;

export const ZPasswordChange = z.object({
  current_password: requestText().min(1).max(1024),
  new_password: ZPassword,
});
export type TPasswordChange = z.infer<typeof ZPasswordChange>;

export const ZTokenResponse = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('bearer'),
  /** Seconds until the access token expires. */
  expires_in: z.number().int(),
});
export type TTokenResponse = z.infer<typeof ZTokenResponse>;

export const ZUserResponse = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string(),
  role: ZUserRole,
  is_active: z.boolean(),
  created_at: ZTimestamp,
});
export type TUserResponse = z.infer<typeof ZUserResponse>;

// --- sessions: the user's refresh-token families (GET/DELETE /api/auth/sessions) ---

export const ZSessionListQuery = ZPageQuery;
export type TSessionListQuery = z.infer<typeof ZSessionListQuery>;

/**
 * A live session: one login's refresh-token family, not revoked and not expired. Neither a token
 * nor a hash of one is ever shown.
 */
export const ZSession = z.object({
  id: z.string().meta({ format: 'uuid' }),
  created_at: ZTimestamp,
  /** When its refresh token was last rotated (each refresh issues a new one); its creation until the first refresh. */
  last_used_at: ZTimestamp,
  /** When it ends unless refreshed before: its newest refresh token's expiry. */
  expires_at: ZTimestamp,
  /**
   * The session the caller's access token was issued with (by login or refresh). An access token
   * issued before sessions were named in tokens has none: every item is then false.
   */
  current: z.boolean(),
});
export type TSession = z.infer<typeof ZSession>;

export const ZSessionList = pageOf(ZSession);
export type TSessionList = z.infer<typeof ZSessionList>;

/** A session id in a path: text that is not one of the caller's session ids is 404, like another user's. */
export const ZSessionIdPath = z.object({ id: requestText().min(1).max(64) });

export const ZOtherSessionsRevoked = z.object({
  /** How many sessions were ended. */
  revoked: z.number().int(),
  /** The session kept: the caller's current one. */
  kept: z.string().meta({ format: 'uuid' }),
});
export type TOtherSessionsRevoked = z.infer<typeof ZOtherSessionsRevoked>;

/**
 * What a personal API key may do (DESIGN §6 "Integrations"): `read` every GET of the user's own
 * data (and the channels), `trade` paper orders and the bot, `live` live orders (besides the live
 * gates), `backtest` and `analysis` their runs. Admin routes, exchange keys, password, sessions,
 * API keys and live promotion take no key at all.
 */
export const ZApiKeyScope = z.enum(['read', 'trade', 'live', 'backtest', 'analysis']);
export type TApiKeyScope = z.infer<typeof ZApiKeyScope>;

/** The prefix of every personal API key's secret: a bearer credential that starts with it is a key, not a JWT. */
export const API_KEY_PREFIX = 'tsk_';

export const ZApiKeyCreate = z.object({
  name: requestText().trim().min(1).max(64),
  scopes: z
    .array(ZApiKeyScope)
    .min(1)
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
  /** When the key stops working (ISO 8601, in the future); never, when absent or null. */
  expires_at: storableText(z.iso.datetime({ offset: true })).nullable().optional(),
});
export type TApiKeyCreate = z.infer<typeof ZApiKeyCreate>;

export const ZApiKey = z.object({
  id: z.string(),
  name: z.string(),
  /** The secret's first characters, to tell keys apart. */
  prefix: z.string(),
  scopes: z.array(ZApiKeyScope),
  created_at: ZTimestamp,
  expires_at: ZTimestamp.nullable(),
  last_used_at: ZTimestamp.nullable(),
});
export type TApiKey = z.infer<typeof ZApiKey>;

/** The answer of a creation: the key, and its secret, shown this once. */
export const ZApiKeyCreated = ZApiKey.extend({ key: z.string() });
export const ZApiKeyList = z.object({ items: z.array(ZApiKey) });
export const ZApiKeyIdPath = z.object({ id: requestText().min(1).max(64) });
