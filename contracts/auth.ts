// Wire shapes of /api/auth: registration, login, token rotation, the current user.
import { z } from 'zod';
import { requestText, ZTimestamp } from './common.ts';

export const ZUserRole = z.enum(['user', 'admin']);
export type TUserRole = z.infer<typeof ZUserRole>;

export const ZUsername = z
  .string()
  .min(3)
  .max(64)
  .regex(/^[a-zA-Z0-9_]+$/, 'only letters, digits and underscores');
export const ZPassword = z.string().min(8).max(128);

export const ZUserRegister = z.object({
  username: ZUsername,
  email: z.email().max(254),
  password: ZPassword,
});
export type TUserRegister = z.infer<typeof ZUserRegister>;

export const ZUserLogin = z.object({
  username: requestText().min(1).max(254),
  password: z.string().min(1).max(1024),
});
export type TUserLogin = z.infer<typeof ZUserLogin>;

export const ZTokenRefresh = z.object({
  refresh_token: z.string().min(1).max(4096),
});
export type TTokenRefresh = z.infer<typeof ZTokenRefresh>;

export const ZPasswordChange = z.object({
  current_password: z.string().min(1).max(1024),
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
