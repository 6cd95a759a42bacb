// Operator commands: `npm run cli -- <command>`.
//   db migrate                          apply pending migrations
//   users create-admin [--username U] [--email E]
//                                       create an admin, or promote and reactivate the existing
//                                       user of that name; the password comes from ADMIN_PASSWORD
//                                       or, when unset, from standard input
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ZPassword, ZUsername } from '../contracts/auth.ts';
import { createServices, openMigratedDatabase } from './app.ts';
import { defaultAdminEmail, loadConfig } from './config.ts';
import { fail, runEntry } from './entry.ts';
import { createLogger } from './observability/logger.ts';

const USAGE = `usage: npm run cli -- <command>
  db migrate
  users create-admin [--username NAME] [--email EMAIL]   (password: ADMIN_PASSWORD or stdin)`;

const out = (line: string) => process.stdout.write(`${line}\n`);

const readStdin = async (): Promise<string> => {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split('\n')[0]?.trim() ?? '';
};

/** The value, checked by the same rule the API applies; a failure names the option. */
const checked = <T>(name: string, schema: z.ZodType<T>, value: unknown): T => {
  const result = schema.safeParse(value);
  return result.success ? result.data : fail(`${name}: ${result.error.issues[0]?.message ?? 'invalid value'}`);
};

runEntry(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { username: { type: 'string' }, email: { type: 'string' } },
  });
  const command = positionals.join(' ');
  if (command !== 'db migrate' && command !== 'users create-admin') fail(USAGE);

  const config = loadConfig();
  const database = await openMigratedDatabase(config);
  if (command === 'db migrate') {
    await database.close();
    out(`migrations applied (${database.kind})`);
    return;
  }
  const services = await createServices(config, createLogger('warn'), database).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  try {
    const username = checked('--username', ZUsername, values.username ?? config.ADMIN_USERNAME);
    const password = checked('password', ZPassword, config.ADMIN_PASSWORD || (await readStdin()));
    const email = checked('--email', z.email(), values.email ?? (values.username ? defaultAdminEmail(username) : config.ADMIN_EMAIL));
    const { user, created } = await services.users.promoteAdmin({ username, password, email });
    out(`${created ? 'created' : 'promoted'} admin ${user.username} (id ${user.id})`);
  } finally {
    await services.close();
  }
});
