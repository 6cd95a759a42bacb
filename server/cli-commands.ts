// The operator commands' work on the services, apart from the entry point (cli.ts) that parses
// the command line and opens the database: a test runs a command's refusals in-process on a
// running service, and starts the real command as a child process only for what needs one.
import type { z } from 'zod';
import { ZAssetClass } from '../contracts/common.ts';
import type { TOhlcvImportResult } from '../contracts/marketdata.ts';
import { CommandError } from './entry.ts';
import { AppError } from './errors.ts';
import { checkedImportBars } from './marketdata/import-check.ts';
import type { Services } from './services.ts';

/** Ends the command with a message once the database is closed (fail would exit at once). */
export const refuse = (message: string): never => {
  throw new CommandError(message);
};

/** The value, checked by the same rule the API applies; a failure names the option. */
export const checked = <T>(name: string, schema: z.ZodType<T>, value: unknown): T => {
  const result = schema.safeParse(value);
  return result.success ? result.data : refuse(`${name}: ${result.error.issues[0]?.message ?? 'invalid value'}`);
};

/** A refusal of the service as the command's message, its field errors listed. */
export const refuseAppError = (error: unknown): never => {
  if (!(error instanceof AppError)) throw error;
  const details = (error.errors ?? []).map((item) => `  ${item.path}: ${item.message}`).join('\n');
  return refuse(`${error.message}${details ? `\n${details}` : ''}`);
};

/** Refuses a file of bars that no import would take, naming its bad rows as the import does. */
export const refuseBadBars = (csv: string): void => {
  try {
    checkedImportBars({ csv });
  } catch (error) {
    refuseAppError(error);
  }
};

/** The line an import of bars ends with. */
export const importedLine = (result: TOhlcvImportResult): string =>
  `imported ${result.imported} bars of ${result.asset_class} ${result.symbol} (${result.first_date} .. ${result.last_date}); ${result.replaced_synthetic} synthetic bars replaced`;

export interface OhlcvFetchOptions {
  symbol?: string | undefined;
  'asset-class'?: string | undefined;
  user?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** `ohlcv fetch`: the bars from the broker of the user's key, imported; its line, or a CommandError naming what was refused. */
export const ohlcvFetch = async (services: Pick<Services, 'users' | 'barsFetch'>, values: OhlcvFetchOptions): Promise<string> => {
  const assetClass = checked('--asset-class', ZAssetClass, values['asset-class']);
  const symbol = values.symbol ?? refuse('--symbol is required');
  const username = values.user ?? refuse('--user is required: the user whose key fetches the bars');
  const user = (await services.users.byUsername(username)) ?? refuse(`--user: no user named ${username.slice(0, 64)}`);
  return importedLine(await services.barsFetch({ userId: user.id, assetClass, symbol, from: values.from, to: values.to }).catch(refuseAppError));
};
