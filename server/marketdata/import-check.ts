// The check every import of bars passes before anything is written: a CSV file's rows or a
// request's bars, each row by the rules of bars.ts, one bad row refusing the whole import. Its own
// module, free of the database, so the CLI refuses a bad file before it opens the data directory.
import { AppError } from '../errors.ts';
import { validateBars, type BarCandidate, type TBar } from './bars.ts';
import { parseOhlcvCsv } from './csv.ts';

/** The bars of an import in date order, or a VALIDATION_ERROR naming each bad row (nothing written). */
export const checkedImportBars = (input: { csv?: string | undefined; bars?: readonly BarCandidate[] | undefined }): TBar[] => {
  const checked = input.csv !== undefined ? parseOhlcvCsv(input.csv) : validateBars(input.bars ?? []);
  if (!checked.ok) {
    const { errors } = checked;
    throw new AppError('VALIDATION_ERROR', `The bars were refused (${errors.length} error${errors.length === 1 ? '' : 's'}); nothing was written`, {
      errors: errors.map(({ row, message }) => ({ path: row === 0 ? 'file' : `row ${row}`, message })),
    });
  }
  return [...checked.bars].sort((a, b) => a.date.localeCompare(b.date));
};
