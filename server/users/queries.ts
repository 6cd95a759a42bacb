// SQL on the users table: the only module that knows its columns.
import { count, desc, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { users, type UserRow } from '../db/schema/index.ts';

type UserInsert = typeof users.$inferInsert;
type UserChange = Partial<Pick<UserInsert, 'isActive' | 'role' | 'passwordHash'>> & { raiseTokenVersion?: boolean };

const byUsername = (username: string) => sql`lower(${users.username}) = ${username.toLowerCase()}`;

export const findUserById = async (db: Queryable, id: number): Promise<UserRow | undefined> =>
  (await db.select().from(users).where(eq(users.id, id)))[0];

/** Usernames are unique without regard to case. */
export const findUserByUsername = async (db: Queryable, username: string, opts: { forUpdate?: boolean } = {}): Promise<UserRow | undefined> => {
  const query = db.select().from(users).where(byUsername(username));
  return (await (opts.forUpdate ? query.for('update') : query))[0];
};

export const isUsernameOrEmailTaken = async (db: Queryable, { username, email }: { username: string; email: string }): Promise<boolean> => {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(sql`${byUsername(username)} or lower(${users.email}) = ${email.toLowerCase()}`)
    .limit(1);
  return row !== undefined;
};

export const insertUser = async (db: Queryable, values: Pick<UserInsert, 'username' | 'email' | 'passwordHash' | 'role'> & { at: Date }): Promise<UserRow> => {
  const { at, ...rest } = values;
  const [row] = await db.insert(users).values({ ...rest, createdAt: at, updatedAt: at }).returning();
  return row!;
};

/** Applies a change to one user; undefined when there is no such user. */
export const updateUser = async (db: Queryable, id: number, change: UserChange & { at: Date }): Promise<UserRow | undefined> => {
  const { at, raiseTokenVersion, ...fields } = change;
  const [row] = await db
    .update(users)
    .set({ ...fields, updatedAt: at, ...(raiseTokenVersion ? { tokenVersion: sql`${users.tokenVersion} + 1` } : {}) })
    .where(eq(users.id, id))
    .returning();
  return row;
};

export const listUsersPage = async (db: Queryable, { page, size }: { page: number; size: number }): Promise<{ rows: UserRow[]; total: number }> => {
  const rows = await db
    .select()
    .from(users)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(size)
    .offset((page - 1) * size);
  const [total] = await db.select({ n: count() }).from(users);
  return { rows, total: total?.n ?? 0 };
};
