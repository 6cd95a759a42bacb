// Examples of /api/auth: registration, login and token rotation, the current user, sessions, API keys.
import type { z } from 'zod';
import type {
  TApiKey,
  TUserResponse,
  ZApiKeyCreate,
  ZApiKeyCreated,
  ZApiKeyIdPath,
  ZApiKeyList,
  ZOtherSessionsRevoked,
  ZPasswordChange,
  ZSessionIdPath,
  ZSessionList,
  ZSessionListQuery,
  ZTokenRefresh,
  ZTokenResponse,
  ZUserLogin,
  ZUserRegister,
  ZUserResponse,
} from '../auth.ts';
import { example, type OperationExample } from './types.ts';

/** The user every example of a user's own data belongs to. */
export const EXAMPLE_USER: TUserResponse = {
  id: 42,
  username: 'alice_trader',
  email: 'alice@example.com',
  role: 'user',
  is_active: true,
  created_at: '2026-09-01T08:15:30.000Z',
};

const SESSION_ID = '3f2b8c1e-5d4a-4e7b-9c6f-1a2b3c4d5e6f';
const REFRESH_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsInR5cCI6InJlZnJlc2giLCJmYW0iOiIzZjJiOGMxZSJ9.Jb8mWq2kVd0Yt5N3rT9xLpA4sE6uH1cG7fZ0oR8iK2Q';

const TOKENS: z.output<typeof ZTokenResponse> = {
  access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsInJvbGUiOiJ1c2VyIiwiZXhwIjoxNzY0NjU0NDAwfQ.d4Xk7Lq1Zp9Rm3Vt6Ny2Bs8Hc0Fw5Ja4Ge1Ku7Oi3Ye',
  refresh_token: REFRESH_TOKEN,
  token_type: 'bearer',
  expires_in: 1800,
};

/** A personal API key as it is listed (its secret never is). */
const EXAMPLE_API_KEY: TApiKey = {
  id: '3c9d2e71-5a4b-4c8d-9e0f-1a2b3c4d5e6f',
  name: 'rebalancer',
  prefix: 'tsk_Q3vX',
  scopes: ['read', 'trade'],
  created_at: '2026-12-01T18:02:11.000Z',
  expires_at: '2027-06-30T00:00:00.000Z',
  last_used_at: null,
};

export const AUTH_EXAMPLES: Record<string, OperationExample> = {
  authRegister: example<typeof ZUserRegister, typeof ZUserResponse>({
    input: { username: 'alice_trader', email: 'alice@example.com', password: 'correct-horse-battery' },
    output: EXAMPLE_USER,
  }),
  authLogin: example<typeof ZUserLogin, typeof ZTokenResponse>({ input: { username: 'alice_trader', password: 'correct-horse-battery' }, output: TOKENS }),
  authRefresh: example<typeof ZTokenRefresh, typeof ZTokenResponse>({ input: { refresh_token: REFRESH_TOKEN }, output: TOKENS }),
  authMe: example<z.ZodVoid, typeof ZUserResponse>({ output: EXAMPLE_USER }),
  authLogout: example<typeof ZTokenRefresh, z.ZodVoid>({ input: { refresh_token: REFRESH_TOKEN } }),
  authLogoutAll: example<z.ZodVoid, z.ZodVoid>({}),
  authChangePassword: example<typeof ZPasswordChange, z.ZodVoid>({ input: { current_password: 'correct-horse-battery', new_password: 'staple-lantern-orbit-42' } }),
  authRevokeOtherSessions: example<z.ZodVoid, typeof ZOtherSessionsRevoked>({ output: { revoked: 2, kept: SESSION_ID } }),
  authSessions: example<typeof ZSessionListQuery, typeof ZSessionList>({
    input: { page: 1, size: 20 },
    output: {
      items: [
        { id: SESSION_ID, created_at: '2026-12-01T07:58:12.000Z', last_used_at: '2026-12-02T03:41:05.000Z', expires_at: '2026-12-09T03:41:05.000Z', current: true },
        { id: '9a7e6d5c-4b3a-4f21-8e0d-c1b2a3948576', created_at: '2026-11-28T19:02:44.000Z', last_used_at: '2026-11-29T06:10:00.000Z', expires_at: '2026-12-06T06:10:00.000Z', current: false },
      ],
      total: 2,
      page: 1,
      size: 20,
    },
  }),
  authRevokeSession: example<typeof ZSessionIdPath, z.ZodVoid>({ input: { id: '9a7e6d5c-4b3a-4f21-8e0d-c1b2a3948576' } }),
  authCreateApiKey: example<typeof ZApiKeyCreate, typeof ZApiKeyCreated>({
    input: { name: 'rebalancer', scopes: ['read', 'trade'], expires_at: '2027-06-30T00:00:00Z' },
    output: { ...EXAMPLE_API_KEY, key: 'tsk_Q3vXk2mP9sLr0aBcDeFgHiJkLmNoPqRsTuVwXyZ01234' },
  }),
  authApiKeys: example<z.ZodVoid, typeof ZApiKeyList>({ output: { items: [{ ...EXAMPLE_API_KEY, last_used_at: '2026-12-02T09:41:00.000Z' }] } }),
  authRevokeApiKey: example<typeof ZApiKeyIdPath, z.ZodVoid>({ input: { id: EXAMPLE_API_KEY.id } }),
};
