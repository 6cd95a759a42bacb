// The storage alone, as a reference for the order bench's open loop: a one-row insert and its
// commit, sent on schedule at the open loop's rate from this process, on the same database. It does
// what every durable order must (a WAL flush per commit) and nothing else, so its tail is the
// machine's: a disk that stalls a commit for 100 ms stalls every order in flight with it, the
// floor's and ours alike, and the slice that meets the stall carries it in its p99.
import { fixed, percentile } from './common.ts';

export interface StorageProbe {
  seconds: number;
  /** Commit latencies from each one's scheduled send, ms, ascending. */
  latenciesMs: number[];
  /** Commits that took longer than SLOW_COMMIT_MS. */
  slow: number;
}

/** A commit this slow is a stall of the storage at these rates (a bare one takes 1-2 ms here). */
export const SLOW_COMMIT_MS = 20;

/** Runs the probe on `databaseUrl` (its own table, dropped after) and returns its latencies. */
export const probeStorage = async (databaseUrl: string, { rate, seconds, poolSize }: { rate: number; seconds: number; poolSize: number }): Promise<StorageProbe> => {
  const { default: postgresJs } = await import('postgres');
  const sql = postgresJs(databaseUrl, { max: poolSize, onnotice: () => undefined });
  try {
    await sql`create table if not exists bench_storage_probe (id bigint generated always as identity primary key, at timestamptz not null default now())`;
    const total = Math.max(1, Math.round(rate * seconds));
    const intervalMs = 1000 / rate;
    const latenciesMs: number[] = [];
    const sent: Promise<void>[] = [];
    const t0 = performance.now() + 5;
    await new Promise<void>((resolve) => {
      let next = 0;
      const tick = () => {
        const now = performance.now();
        while (next < total && t0 + next * intervalMs <= now) {
          const scheduled = t0 + next * intervalMs;
          sent.push(
            sql
              .begin((tx) => tx`insert into bench_storage_probe default values`)
              .then(() => {
                latenciesMs.push(performance.now() - scheduled);
              }),
          );
          next++;
        }
        if (next >= total) resolve();
        else setTimeout(tick, Math.max(0, t0 + next * intervalMs - performance.now()));
      };
      setTimeout(tick, 5);
    });
    await Promise.all(sent);
    await sql`drop table bench_storage_probe`;
    latenciesMs.sort((a, b) => a - b);
    return { seconds, latenciesMs, slow: latenciesMs.filter((ms) => ms > SLOW_COMMIT_MS).length };
  } finally {
    await sql.end({ timeout: 5 });
  }
};

export const storageLine = ({ seconds, latenciesMs, slow }: StorageProbe, rate: number) =>
  `storage alone (a one-row insert and commit at ${rate}/s from this process, ${seconds} s, after the slices): ` +
  `p50 ${fixed(percentile(latenciesMs, 50), 1)}, p99 ${fixed(percentile(latenciesMs, 99), 1)}, max ${fixed(latenciesMs.at(-1) ?? 0, 1)} ms; ` +
  `${slow} of ${latenciesMs.length} commits over ${SLOW_COMMIT_MS} ms`;
