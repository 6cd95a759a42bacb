// Operator commands: `npm run cli -- <command>`.
//   db migrate                          apply pending migrations
//   users create-admin [--username U] [--email E]
//                                       create or promote an admin; the password comes from
//                                       ADMIN_PASSWORD or, when unset, from standard input
import { parseArgs } from 'node:util';
import { ensureAdmin } from './auth/admin.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/client.ts';
import { openMigratedDatabase } from './app.ts';
import { startChangeFeed } from './events/changes.ts';
import { createLogger } from './observability/logger.ts';

const USAGE = `usage: npm run cli -- <command>
  db migrate
  users create-admin [--username NAME] [--email EMAIL]   (password: ADMIN_PASSWORD or stdin)`;

const out = (line: string) => process.stdout.write(`${line}\n`);
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const readStdin = async (): Promise<string> => {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split('\n')[0]?.trim() ?? '';
};

const main = async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { username: { type: 'string' }, email: { type: 'string' } },
  });
  const command = positionals.join(' ');
  if (command !== 'db migrate' && command !== 'users create-admin') fail(USAGE);

  const config = loadConfig();
  const database = await openMigratedDatabase(config);
  try {
    if (command === 'db migrate') {
      out(`migrations applied (${database.kind})`);
      return;
    }
    const username = values.username ?? config.ADMIN_USERNAME;
    if (!username || !/^[a-zA-Z0-9_]{3,64}$/.test(username)) fail('a username of 3-64 letters, digits or _ is required (--username or ADMIN_USERNAME)');
    const password = config.ADMIN_PASSWORD || (await readStdin());
    if (password.length < 8 || password.length > 128) fail('the password must be 8-128 characters');
    const changes = await startChangeFeed(database, createLogger('warn'));
    const { user, created } = await ensureAdmin({
      db: database.db,
      changes,
      username: username,
      password,
      email: values.email ?? config.ADMIN_EMAIL,
      via: 'cli',
    });
    await changes.close();
    out(`${created ? 'created' : 'promoted'} admin ${user.username} (id ${user.id})`);
  } finally {
    await database.close();
  }
};

main().catch((error: unknown) => {
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  if (error instanceof DataDirLockedError) fail(error.message);
  fail(error instanceof Error ? error.message : String(error));
});
