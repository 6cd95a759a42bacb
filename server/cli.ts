// Operator commands: `npm run cli -- <command>`.
//   db migrate                          apply pending migrations
//   users create-admin [--username U] [--email E]
//                                       create an admin, or promote and reactivate the existing
//                                       user of that name; the password comes from ADMIN_PASSWORD
//                                       or, when unset, from standard input
//   ohlcv import FILE --symbol S --asset-class C
//                                       import daily bars from a CSV file (all rows or none)
//   ohlcv fetch --symbol S --asset-class C --user U [--from D] [--to D]
//                                       fetch daily bars from the broker of user U's key for the
//                                       asset class and import them (default: the year to today)
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ZPassword, ZUsername } from '../contracts/auth.ts';
import { ZAssetClass } from '../contracts/common.ts';
import { checked, importedLine, ohlcvFetch, refuse, refuseAppError, refuseBadBars } from './cli-commands.ts';
import { defaultAdminEmail, loadConfig } from './config.ts';
import { fail, loadModules, runEntry } from './entry.ts';

const USAGE = `usage: npm run cli -- <command>
  db migrate
  users create-admin [--username NAME] [--email EMAIL]   (password: ADMIN_PASSWORD or stdin)
  ohlcv import FILE --symbol SYMBOL --asset-class crypto|us_equity|kr_equity
  ohlcv fetch --symbol SYMBOL --asset-class crypto|us_equity|kr_equity --user USERNAME [--from YYYY-MM-DD] [--to YYYY-MM-DD]`;

const out = (line: string) => process.stdout.write(`${line}\n`);

const readStdin = async (): Promise<string> => {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split('\n')[0]?.trim() ?? '';
};

const readText = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    return refuse(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
};

runEntry(async () => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { username: { type: 'string' }, email: { type: 'string' }, symbol: { type: 'string' }, 'asset-class': { type: 'string' }, user: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
  });
  const [first, second, file, ...rest] = positionals;
  const command = `${first ?? ''} ${second ?? ''}`;
  const known = ['db migrate', 'users create-admin', 'ohlcv import', 'ohlcv fetch'];
  if (!known.includes(command) || (command === 'ohlcv import' ? file === undefined || rest.length > 0 : file !== undefined)) fail(USAGE);

  const config = loadConfig();
  // What an import is refused for without the database (its options, its file), before the data
  // directory is opened: a typo costs no start of the database and leaves the directory alone.
  const importing =
    command === 'ohlcv import'
      ? {
          assetClass: checked('--asset-class', ZAssetClass, values['asset-class']),
          symbol: values.symbol ?? refuse('--symbol is required'),
          csv: readText(file!),
        }
      : undefined;
  if (importing) refuseBadBars(importing.csv);
  // The service's modules only once the command and the settings are known to be good.
  const [{ createServices, openMigratedDatabase }, { createLogger }] = await loadModules(() => Promise.all([import('./app.ts'), import('./observability/logger.ts')]));
  const database = await openMigratedDatabase(config);
  if (command === 'db migrate') {
    await database.close();
    out(`migrations applied (${database.kind})`);
    return;
  }
  const services = await createServices(config, createLogger('warn'), database, { takeBrokerEvents: false }).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  try {
    if (command === 'ohlcv fetch') {
      out(await ohlcvFetch(services, values));
      return;
    }
    if (importing) {
      const { assetClass, symbol, csv } = importing;
      out(importedLine(await services.marketData.importBars({ actor: null, input: { asset_class: assetClass, symbol, csv } }).catch(refuseAppError)));
      return;
    }
    const username = checked('--username', ZUsername, values.username ?? config.ADMIN_USERNAME);
    const password = checked('password', ZPassword, config.ADMIN_PASSWORD || (await readStdin()));
    const email = checked('--email', z.email(), values.email ?? (values.username ? defaultAdminEmail(username) : config.ADMIN_EMAIL));
    const { user, created } = await services.users.promoteAdmin({ username, password, email });
    out(`${created ? 'created' : 'promoted'} admin ${user.username} (id ${user.id})`);
  } finally {
    await services.close();
  }
});
