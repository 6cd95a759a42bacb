// Examples of /api/auth: registration, login and token rotation, the current user, sessions.
import type { z } from 'zod';
import type { ZOtherSessionsRevoked, ZPasswordChange, ZSessionIdPath, ZSessionList, ZSessionListQuery, ZTokenRefresh, ZTokenResponse, ZUserLogin, ZUserRegister, ZUserResponse, TUserResponse } from '../auth.ts';
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
};
