// The activities ledger as CSV, for tax tools and spreadsheets: one header line of the type's
// columns, then a line per row, each field as the JSON answer has it (ISO dates, decimals as
// stored), quoted where it holds a comma, a quote or a line break (RFC 4180).
import { ACTIVITY_COLUMNS, type TActivityList, type TActivityType } from '../../contracts/portfolio.ts';

/** Every field of the ledger's rows is text (dates, decimals, names). */
const field = (value: string | undefined): string => {
  const text = value ?? '';
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

export const activitiesCsv = (type: TActivityType, list: TActivityList): string => {
  const columns = ACTIVITY_COLUMNS[type];
  const lines = [columns.join(',')];
  for (const item of list.items) lines.push(columns.map((column) => field((item as Record<string, string | undefined>)[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
};
