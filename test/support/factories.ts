// Test data inserted straight into the database through the service's own query modules: no
// HTTP round trip and no argon2 per user (one hash per test process), so setup stays cheap.
import { toUserResponse, toAuthUser, type AuthUser } from '../../server/users/users.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { insertUser, updateUser } from '../../server/users/queries.ts';
import { uniqueName, type TestServer, type TestUser } from './server.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { insertOrderIntent } from '../../server/orders/write-queries.ts';

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

/**
 * A paper trading record in an asset class, as readiness reads it: the first paper order at
 * `firstAt`, and `filled` filled paper orders in all (written as the order service's rows).
 */
export const newPaperRecord = async (server: TestServer, { userId, assetClass, firstAt, filled }: { userId: number; assetClass: TAssetClass; firstAt: Date; filled: number }): Promise<void> => {
  const count = Math.max(1, filled);
  for (let i = 0; i < count; i++) {
    const clientOrderId = `paper-record-${userId}-${assetClass}-${i}`;
    await insertOrderIntent(server.services.db, {
      userId,
      clientOrderId,
      brokerOrderId: `sim-${clientOrderId}`,
      assetClass,
      live: false,
      broker: 'simulator',
      symbol: assetClass === 'crypto' ? 'BTC/USDT' : assetClass === 'us_equity' ? 'AAPL' : '005930',
      side: 'buy',
      orderType: 'market',
      timeInForce: 'gtc',
      qty: '1',
      filledQty: i < filled ? '1' : '0',
      status: i < filled ? 'filled' : 'canceled',
      metadata: {},
      submittedAt: new Date(firstAt.getTime() + i * 60_000),
      updatedAt: new Date(firstAt.getTime() + i * 60_000),
    });
  }
};
