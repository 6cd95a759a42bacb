// Users: identity, credentials and role.
import { sql } from 'drizzle-orm';
import { boolean, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';

export const users = pgTable(
  'users',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    username: text('username').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: ['user', 'admin'] }).notNull().default('user'),
    isActive: boolean('is_active').notNull().default(true),
    // Carried in every token; raising it ends every token issued before (password change,
    // deactivation, logout everywhere). Reactivation leaves it, so old tokens stay dead.
    tokenVersion: integer('token_version').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // Usernames and e-mails are unique without regard to case.
    uniqueIndex('users_username_lower_key').on(sql`lower(${t.username})`),
    uniqueIndex('users_email_lower_key').on(sql`lower(${t.email})`),
  ],
);

export type UserRow = typeof users.$inferSelect;
