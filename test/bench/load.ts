// The load generator of `npm run bench`, run by run.ts as a child process: autocannon gets a
// process (and so an event loop) of its own and never competes with the servers on theirs.
// Input: one JSON LoadSpec as argv[2]. Output: one JSON LoadSummary on stdout, nothing else.
//
// Targets are measured in alternating slices rather than one after the other: each target is
// warmed up once, then `rounds` times each target gets seconds/rounds of load, the order
// flipping every round (A B, B A, ...). Other work on the machine that comes and goes then
// weighs on every target alike, which keeps the ratio between them honest.
import autocannon, { type RawResult } from 'autocannon';

export interface LoadTarget {
  name: string;
  url: string;
}

export interface LoadSpec {
  targets: LoadTarget[];
  headers: Record<string, string>;
  connections: number;
  pipelining: number;
  warmupSeconds: number;
  /** Measured seconds per target, split over the rounds. */
  seconds: number;
  rounds: number;
}

export interface TargetSummary {
  name: string;
  /** Completed requests over measured seconds (warm-up excluded). */
  requestsPerSec: number;
  requests: number;
  durationSec: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  ok2xx: number;
  non2xx: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  warmupRequests: number;
}

export type LoadSummary = TargetSummary[];

// A run ends on a sample tick; 100 ms keeps slices close to their nominal length.
const SAMPLE_INTERVAL_MS = 100;

const slice = (spec: LoadSpec, target: LoadTarget, seconds: number): Promise<RawResult> =>
  Promise.resolve(
    autocannon({
      url: target.url,
      headers: spec.headers,
      connections: spec.connections,
      pipelining: spec.pipelining,
      duration: seconds,
      sampleInt: SAMPLE_INTERVAL_MS,
      skipAggregateResult: true,
    }),
  );

const summarize = (spec: LoadSpec, target: LoadTarget, runs: RawResult[], warmup: RawResult): TargetSummary => {
  const merged = autocannon.aggregateResult(runs, { url: target.url, connections: spec.connections, pipelining: spec.pipelining });
  const requests = runs.reduce((sum, run) => sum + run.totalCompletedRequests, 0);
  const durationSec = runs.reduce((sum, run) => sum + run.duration, 0);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(merged.statusCodeStats)) statusCodes[code] = count;
  return {
    name: target.name,
    requestsPerSec: durationSec > 0 ? requests / durationSec : 0,
    requests,
    durationSec,
    latencyMs: { mean: merged.latency.mean, p50: merged.latency.p50, p90: merged.latency.p90, p99: merged.latency.p99, max: merged.latency.max },
    ok2xx: merged['2xx'],
    non2xx: merged.non2xx,
    errors: merged.errors,
    timeouts: merged.timeouts,
    statusCodes,
    warmupRequests: warmup.totalCompletedRequests,
  };
};

const run = async (spec: LoadSpec): Promise<LoadSummary> => {
  const warmups: RawResult[] = [];
  for (const target of spec.targets) warmups.push(await slice(spec, target, spec.warmupSeconds));
  const runs: RawResult[][] = spec.targets.map(() => []);
  for (let round = 0; round < spec.rounds; round++) {
    const order = spec.targets.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) runs[index]!.push(await slice(spec, spec.targets[index]!, spec.seconds / spec.rounds));
  }
  return spec.targets.map((target, index) => summarize(spec, target, runs[index]!, warmups[index]!));
};

const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
process.stdout.write(`${JSON.stringify(await run(spec))}\n`);
