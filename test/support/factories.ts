// Test data inserted straight into the database through the service's own query modules: no
// HTTP round trip and no argon2 per user (one hash per test process), so setup stays cheap.
import { toUserResponse, toAuthUser, type AuthUser } from '../../server/users/users.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { insertUser, updateUser } from '../../server/users/queries.ts';
import { uniqueName, type TestServer, type TestUser } from './server.ts';

/** Every factory user's password. */
export const FACTORY_PASSWORD = 'factory-password-123';
let factoryHash: Promise<string> | undefined;

export interface NewUserOptions {
  role?: 'user' | 'admin';
  active?: boolean;
  prefix?: string;
}

export type FactoryUser = TestUser & { auth: AuthUser };

/** A user with a live session (access and refresh token), as if it had registered and logged in. */
export const newUser = async (server: TestServer, { role = 'user', active = true, prefix = role }: NewUserOptions = {}): Promise<FactoryUser> => {
  const { db, clock, auth } = server.services;
  const username = uniqueName(prefix);
  const passwordHash = await (factoryHash ??= hashPassword(FACTORY_PASSWORD));
  const row = await insertUser(db, { username, email: `${username}@example.com`, passwordHash, role, at: clock.now() });
  const user = toAuthUser(row);
  const tokens = await auth.issueSession({ user });
  const stored = active ? row : (await updateUser(db, row.id, { isActive: false, at: clock.now() }))!;
  return { user: toUserResponse(toAuthUser(stored)), auth: toAuthUser(stored), tokens, password: FACTORY_PASSWORD, username };
};
