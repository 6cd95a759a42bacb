// Logged errors never carry a failed query's parameters; redaction lets only the confirm token's
// own key through.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it, vi } from 'vitest';
import { logDestination, serializeError } from '../../server/observability/logger.ts';
import { capturedLogger } from '../support/logs.ts';

describe('serializeError', () => {
  it('keeps the SQL and the database reason of a failed query, not its parameters', () => {
    const reason = Object.assign(new Error('duplicate key value violates unique constraint "users_email_lower_key"'), { code: '23505' });
    const failed = new DrizzleQueryError('insert into "users" ("username", "password_hash") values ($1, $2)', ['alice', '$argon2id$v=19$secret-hash'], reason);
    const logged = serializeError(failed);
    expect(JSON.stringify(logged)).not.toContain('secret-hash');
    expect(JSON.stringify(logged)).not.toContain('alice');
    expect(logged).toMatchObject({
      type: 'DrizzleQueryError',
      message: 'Failed query: insert into "users" ("username", "password_hash") values ($1, $2)',
      cause: { code: '23505', message: expect.stringContaining('users_email_lower_key') },
    });
  });

  it('keeps an ordinary error’s message and stack', () => {
    const logged = serializeError(new TypeError('boom'));
    expect(logged).toMatchObject({ type: 'TypeError', message: 'boom', stack: expect.stringContaining('TypeError: boom') });
  });
});

describe('redaction', () => {
  it('lets the live confirm token through under its own key only (the interface asks for it in the log)', () => {
    const logs = capturedLogger('warn');
    logs.logger.warn({ live_confirm_token: 'lct_visible', token: 'hidden-1', data: { token: 'hidden-2', live_confirm_token: 'lct_nested' } }, 'issued');
    logs.logger.flush();
    const [line] = logs.lines;
    expect(line).toMatchObject({ live_confirm_token: 'lct_visible', token: '[redacted]', data: { token: '[redacted]' } });
    expect(logs.text()).not.toContain('hidden-');
  });
});

describe('logDestination', () => {
  it('does not flush from its timer once the file is closing (the flush would throw where nothing catches it)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = mkdtempSync(path.join(tmpdir(), 'ts-log-'));
    try {
      const destination = logDestination(path.join(dir, 'service.log'));
      await new Promise<void>((resolve) => destination.once('ready', () => resolve()));
      const closed = new Promise<void>((resolve) => destination.once('close', () => resolve()));
      // Nothing is buffered, so the end closes at once: destroyed now, 'close' only after the
      // file's sync and close. The timer's tick falls in between.
      destination.end();
      expect(() => vi.advanceTimersByTime(1_000)).not.toThrow();
      await closed;
    } finally {
      vi.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
