// The backtest service: checks a request (asset class of the route, strategy and its strict
// params, instrument, fee profile, bars in range), runs the engine, computes the metrics, trims
// the curve and the trades, and stores the result as the user received it. Reads are the user's
// own results only, of the route's asset classes.
import { randomUUID } from 'node:crypto';
import type { TBacktestList, TBacktestListQuery, TBacktestRequest, TBacktestResult, TStrategyList, TSweepList, TSweepListQuery, TSweepRequest, TSweepResult, TWalkForwardRequest, TWalkForwardResult } from '../../contracts/backtest.ts';
import { CURRENCY_OF_ASSET_CLASS, type TAssetClass } from '../../contracts/common.ts';
import { defaultProfileFor, profileByName } from '../brokers/fees.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { readBarColumns, warmupStart } from '../marketdata/queries.ts';
import { computeMetrics, spanMetrics } from './metrics.ts';
import { findResult, findSweep, insertResult, insertSweep, listResults, listSweeps } from './queries.ts';
import { findStrategy, resolveStrategy, STRATEGIES } from './strategies/index.ts';
import { createRunAdmission, type RunAdmission } from './admission.ts';
import type { BacktestPool } from './pool.ts';
import { barsFrom, jobBarsOf, runJob, summarizeJob, type BacktestJob, type JobBars, type MetricsSpan, type RunSummary, type StrategyRunSpec, type TaskOutcome } from './task.ts';
import { exitEchoOf, exitRulesOf, gridPoints, paramsSchemaOf, rankValue, specOf, sweepSummaryOf, toBars, toSummary, warmupOf } from './run-specs.ts';
import { curveIndices } from './trim.ts';

/** Which asset classes each route family runs and reads. */
export const FAMILY_ASSET_CLASSES = { equity: ['us_equity', 'kr_equity'], crypto: ['crypto'] } as const satisfies Record<string, readonly TAssetClass[]>;
export type TBacktestFamily = keyof typeof FAMILY_ASSET_CLASSES;

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { errors: [{ path, message }] });

export type Backtests = ReturnType<typeof createBacktests>;

export interface BacktestDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'FEATURE_EQUITY_PAPER' | 'BACKTEST_INLINE_MAX_BARS' | 'BACKTEST_SWEEP_MAX_POINTS' | 'BACKTEST_MAX_RUNNING_PER_USER'>;
  instruments: Instruments;
  /** Where long runs go; without one every run stays on the event loop. */
  pool?: BacktestPool | undefined;
  /** The pool's threads: a sweep makes one job per thread. */
  poolSize?: number;
  /** How many runs of one user may be under way at once (default: BACKTEST_MAX_RUNNING_PER_USER in this instance). */
  admission?: RunAdmission;
}

export const createBacktests = ({ db, clock, config, instruments, pool, poolSize = 1, admission = createRunAdmission(config.BACKTEST_MAX_RUNNING_PER_USER) }: BacktestDeps) => {
  const inlineMaxBars = config.BACKTEST_INLINE_MAX_BARS;

  type TRunBase = Pick<TBacktestRequest, 'symbol' | 'asset_class' | 'start_date' | 'end_date' | 'profile_name' | 'stop_loss_pct' | 'take_profit_pct' | 'trail_pct'>;

  /** The first checks of every run: the feature flag, then the route's asset class. */
  const routeAssetClass = (request: TRunBase, family: TBacktestFamily): TAssetClass => {
    if (!config.FEATURE_EQUITY_PAPER) throw new AppError('FEATURE_DISABLED', 'Backtests are disabled (FEATURE_EQUITY_PAPER)');
    const allowed: readonly string[] = FAMILY_ASSET_CLASSES[family];
    if (!allowed.includes(request.asset_class)) {
      throw new AppError('INVALID_ASSET_CLASS', family === 'equity' ? 'asset_class must be us_equity or kr_equity (crypto runs at POST /api/backtest/run)' : 'asset_class must be crypto on this route (stocks run at POST /api/equity/backtest)');
    }
    return request.asset_class as TAssetClass;
  };

  /**
   * What every run of a request needs after its checks: the instrument, the profile, the range's
   * bars, and up to `warmup` stored bars before `start_date` to warm the indicators on (DESIGN:
   * Lean's warm-up, freqtrade's startup candles), fewer when fewer are stored. Every job of the
   * request runs with its exits.
   */
  const prepare = async (request: TRunBase, assetClass: TAssetClass, warmup: number) => {
    const instrument = await instruments.resolve({ symbol: request.symbol, assetClass });
    if (!instrument) throw new AppError('INVALID_SYMBOL', `${request.symbol.slice(0, 32)} is not a registered ${assetClass} instrument`);
    const profile = request.profile_name === undefined ? defaultProfileFor(assetClass) : profileByName(request.profile_name);
    if (!profile) throw invalid('profile_name', `unknown profile; one of us_broker_zero, kr_broker_default, crypto_default`);
    if (profile.assetClass !== assetClass) throw invalid('profile_name', `${profile.name} is a ${profile.assetClass} profile`);
    const key = { assetClass, symbol: instrument.symbol };
    const warm = await warmupStart(db, { ...key, before: request.start_date, limit: warmup });
    const columns = await readBarColumns(db, { ...key, from: warm.from ?? request.start_date, to: request.end_date });
    if (!columns || columns.count <= warm.bars) throw new AppError('INSUFFICIENT_DATA', `No daily bars of ${instrument.symbol} between ${request.start_date} and ${request.end_date}`);
    const all = toBars(columns);
    const warmupBars = warm.bars;
    const exits = exitRulesOf(request);
    /** The range's bars (views after the warm-up): what the answer and the metrics read. */
    const bars = barsFrom(all, warmupBars);
    const jobOf = (runs: StrategyRunSpec[], initialCapital: number | string, over: { bars: JobBars; warmup: number } = { bars: jobBarsOf(all), warmup: warmupBars }): BacktestJob => ({
      bars: over.bars,
      warmup: over.warmup,
      initialCapital: String(initialCapital),
      profileName: profile.name,
      fractional: assetClass !== 'kr_equity',
      exits,
      runs,
    });
    /** What metrics over bars [from, to) of the range (the whole range by default) read of their dates. */
    const spanOf = (from = 0, to = bars.length): MetricsSpan => ({ startDate: bars.dates[from]!, endDate: bars.dates[to - 1]!, assetClass });
    /** An outcome's metrics over bars [from, to) of the range (the whole range by default). */
    const metricsOf = (outcome: TaskOutcome, initialCapital: number, from = 0, to = bars.length) =>
      spanMetrics({ initialCapital, equity: outcome.equity, tripPnls: outcome.trips.map((trip) => trip.pnl), firstClose: bars.close[from]!, lastClose: bars.close[to - 1]!, ...spanOf(from, to) });
    return { instrument, profile, all, bars, warmupBars, jobOf, spanOf, metricsOf };
  };

  const run = async ({ user, request, family }: { user: { id: number }; request: TBacktestRequest; family: TBacktestFamily }): Promise<TBacktestResult> => {
    const assetClass = routeAssetClass(request, family);
    const { strategy, params } = resolveStrategy(request.strategy_name, request.strategy_params);
    return admission.hold(user.id, () => runChecked({ user, request, assetClass, strategy, params }));
  };

  const runChecked = async ({ user, request, assetClass, strategy, params }: { user: { id: number }; request: TBacktestRequest; assetClass: TAssetClass } & ReturnType<typeof resolveStrategy>): Promise<TBacktestResult> => {
    const { instrument, profile, bars, warmupBars, jobOf, metricsOf } = await prepare(request, assetClass, strategy.warmup(params));
    const job = jobOf([specOf(strategy.name, params)], request.initial_capital);
    // A short run costs less than its handoff; a long one must not hold the event loop.
    const [outcome] = pool && bars.length > inlineMaxBars ? await pool.run(job) : runJob(job);
    if (!outcome) throw new Error('the backtest gave no outcome');
    const metrics = metricsOf(outcome, request.initial_capital);

    const id = randomUUID();
    const createdAt = clock.now();
    const body = {
      asset_class: assetClass,
      currency: CURRENCY_OF_ASSET_CLASS[assetClass],
      profile_name: profile.name,
      strategy_name: strategy.name,
      strategy_params: params,
      ...exitEchoOf(request),
      symbol: instrument.symbol,
      start_date: request.start_date,
      end_date: request.end_date,
      initial_capital: request.initial_capital,
      warmup_bars: warmupBars,
      final_capital: Number(outcome.finalCapital),
      total_return_pct: metrics.total_return_pct,
      annual_return: metrics.annual_return,
      sharpe_ratio: metrics.sharpe_ratio,
      max_drawdown_pct: metrics.max_drawdown_pct,
      win_rate: metrics.win_rate,
      profit_factor: metrics.profit_factor,
      total_trades: metrics.total_trades,
      buy_hold_return_pct: metrics.buy_hold_return_pct,
      equity_curve: curveIndices(outcome.equity).map((i) => ({ date: bars.dates[i]!, equity: outcome.equity[i]! })),
      trades: outcome.fills.map((fill) => ({
        timestamp: `${bars.dates[fill.index]!}T00:00:00.000Z`,
        symbol: instrument.symbol,
        side: fill.side,
        price: fill.price,
        amount: fill.qty,
        fee: fill.fee,
        ...(fill.reason === undefined ? {} : { reason: fill.reason }),
      })),
      equity_curve_total: bars.length,
      trades_total: outcome.fillCount,
    };
    await insertResult(db, {
      id,
      userId: user.id,
      assetClass,
      symbol: instrument.symbol,
      strategyName: strategy.name,
      strategyParams: params,
      profileName: profile.name,
      currency: body.currency,
      startDate: request.start_date,
      endDate: request.end_date,
      totalReturnPct: metrics.total_return_pct,
      sharpeRatio: metrics.sharpe_ratio,
      maxDrawdownPct: metrics.max_drawdown_pct,
      winRate: metrics.win_rate,
      totalTrades: metrics.total_trades,
      result: body,
      createdAt,
    });
    return { result_id: id, created_at: createdAt.toISOString(), ...body };
  };

  /**
   * Runs the strategy at every point of the grid (across the worker pool when there is one),
   * ranks the points by the chosen metric and stores them as one sweep. Points the strategy's
   * schema refuses are listed as skipped; a grid key the strategy does not have is refused.
   */
  /** A grid's checks and its points as strategy runs: the ones the strategy's schema takes, and the refused with why. */
  const gridRuns = (request: Pick<TSweepRequest, 'strategy_name' | 'grid' | 'strategy_params'>) => {
    const strategy = findStrategy(request.strategy_name.toLowerCase());
    if (!strategy) throw new AppError('STRATEGY_NOT_FOUND', `No strategy named ${request.strategy_name.slice(0, 64)}; see GET /api/strategy/list`);
    const known = new Set(Object.keys(paramsSchemaOf(strategy)));
    const unknown = Object.keys(request.grid).filter((key) => !known.has(key));
    if (unknown.length > 0) throw invalid('grid', `${strategy.name} has no parameter ${unknown.map((key) => key.slice(0, 64)).join(', ')}`);
    const points = gridPoints(request.grid);
    if (points.length > config.BACKTEST_SWEEP_MAX_POINTS) throw invalid('grid', `${points.length} points; at most ${config.BACKTEST_SWEEP_MAX_POINTS} (BACKTEST_SWEEP_MAX_POINTS)`);
    const skipped: TSweepResult['skipped'] = [];
    const runs: StrategyRunSpec[] = [];
    for (const point of points) {
      const parsed = strategy.params.safeParse({ ...(request.strategy_params ?? {}), ...point });
      if (!parsed.success) skipped.push({ strategy_params: point, reason: parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ') });
      else runs.push(specOf(strategy.name, parsed.data));
    }
    return { strategy, runs, skipped };
  };

  /**
   * Many strategy runs over one job's bars: one job per worker thread (the bars cross once per
   * thread), each answered by `pooled`, or all in place by `inPlace` without a pool.
   */
  const acrossPool = async <TAnswer>(runs: StrategyRunSpec[], inPlace: (runs: StrategyRunSpec[]) => TAnswer[], pooled: (pool: BacktestPool, runs: StrategyRunSpec[]) => Promise<TAnswer[]>): Promise<TAnswer[]> => {
    if (!pool || runs.length === 0) return inPlace(runs);
    const share = Math.ceil(runs.length / Math.max(1, poolSize));
    const parts = Array.from({ length: Math.ceil(runs.length / share) }, (_, k) => runs.slice(k * share, (k + 1) * share));
    return (await Promise.all(parts.map((part) => pooled(pool, part)))).flat();
  };

  /** Many runs' whole outcomes (curves, round trips, fills). */
  const runMany = (jobOf: (runs: StrategyRunSpec[]) => BacktestJob, runs: StrategyRunSpec[]): Promise<TaskOutcome[]> =>
    acrossPool(runs, (all) => runJob(jobOf(all)), (workers, part) => workers.run(jobOf(part)));

  /** Many runs' summaries over the span (metrics worked out where they ran): all a ranking needs. */
  const summarizeMany = (jobOf: (runs: StrategyRunSpec[]) => BacktestJob, runs: StrategyRunSpec[], span: MetricsSpan): Promise<RunSummary[]> =>
    acrossPool(runs, (all) => summarizeJob(jobOf(all), span), (workers, part) => workers.summarize(jobOf(part), span));

  const sweep = async ({ user, request, family }: { user: { id: number }; request: TSweepRequest; family: TBacktestFamily }): Promise<TSweepResult> => {
    const assetClass = routeAssetClass(request, family);
    const grid = gridRuns(request);
    return admission.hold(user.id, () => sweepChecked({ user, request, assetClass, ...grid }));
  };

  const sweepChecked = async ({ user, request, assetClass, strategy, runs, skipped }: { user: { id: number }; request: TSweepRequest; assetClass: TAssetClass } & ReturnType<typeof gridRuns>): Promise<TSweepResult> => {
    const { instrument, profile, jobOf, spanOf } = await prepare(request, assetClass, warmupOf(strategy, runs));
    const summaries = await summarizeMany((part) => jobOf(part, request.initial_capital), runs, spanOf());
    const ranked = summaries
      .map((summary, i) => ({ rank: 0, strategy_params: runs[i]!.params, ...summary.metrics, final_capital: Number(summary.finalCapital) }))
      .sort((a, b) => rankValue(b, request.rank_by) - rankValue(a, request.rank_by) || 0)
      .map((point, i) => ({ ...point, rank: i + 1 }));
    const id = randomUUID();
    const createdAt = clock.now();
    const body = {
      asset_class: assetClass,
      symbol: instrument.symbol,
      strategy_name: strategy.name,
      profile_name: profile.name,
      start_date: request.start_date,
      end_date: request.end_date,
      initial_capital: request.initial_capital,
      ...exitEchoOf(request),
      rank_by: request.rank_by,
      points: ranked,
      skipped,
    };
    await insertSweep(db, { id, userId: user.id, assetClass, symbol: instrument.symbol, strategyName: strategy.name, result: body, createdAt });
    return { sweep_id: id, created_at: createdAt.toISOString(), ...body };
  };

  /**
   * Rolling walk-forward: on each train window the grid is run and the best point by `rank_by`
   * chosen; that point trades the following test window. Windows roll forward by `test_bars`,
   * and the last may be shorter. The test windows are one continuous run (DESIGN): the position
   * and the capital carry from one window to the next, each window's strategy decides from the
   * close before its first bar (rebuilt on its warm-up bars when its params change), and only the
   * end closes what is still held. The answer has every window (its share of the run: the marks
   * over its bars, the round trips that ended in it) and the run's out-of-sample curve and metrics.
   */
  const walkForward = async ({ user, request, family }: { user: { id: number }; request: TWalkForwardRequest; family: TBacktestFamily }): Promise<TWalkForwardResult> => {
    const assetClass = routeAssetClass(request, family);
    const grid = gridRuns(request);
    return admission.hold(user.id, () => walkForwardChecked({ request, assetClass, ...grid }));
  };

  const walkForwardChecked = async ({ request, assetClass, strategy, runs, skipped }: { request: TWalkForwardRequest; assetClass: TAssetClass } & ReturnType<typeof gridRuns>): Promise<TWalkForwardResult> => {
    if (runs.length === 0) throw invalid('grid', 'the strategy refuses every point of the grid');
    const warmupWanted = warmupOf(strategy, runs);
    const { instrument, profile, all, bars, warmupBars, jobOf, spanOf } = await prepare(request, assetClass, warmupWanted);
    const { train_bars: train, test_bars: test } = request;
    if (bars.length <= train) throw new AppError('INSUFFICIENT_DATA', `${bars.length} bars in range; one train window and a test bar need ${train + 1}`);
    // Bars [from, to) of the range with up to `warmup` bars before them: copies, not views (a view would carry the whole series to a worker).
    const slice = (from: number, to: number, warmup: number): { bars: JobBars; warmup: number } => {
      const start = Math.max(0, from + warmupBars - warmup);
      const end = to + warmupBars;
      return {
        bars: { length: end - start, open: all.open.slice(start, end), high: all.high.slice(start, end), low: all.low.slice(start, end), close: all.close.slice(start, end), volume: all.volume.slice(start, end) },
        warmup: from + warmupBars - start,
      };
    };

    const chosen: { trainStart: number; testStart: number; testEnd: number; best: StrategyRunSpec; score: number }[] = [];
    for (let start = 0; start + train < bars.length; start += test) {
      const testStart = start + train;
      const trained = await summarizeMany((part) => jobOf(part, request.initial_capital, slice(start, testStart, warmupWanted)), runs, spanOf(start, testStart));
      let best = 0;
      let bestScore = Number.NEGATIVE_INFINITY;
      trained.forEach((summary, i) => {
        const score = rankValue({ ...summary.metrics, rank: 0, strategy_params: {} }, request.rank_by);
        if (score > bestScore) {
          bestScore = score;
          best = i;
        }
      });
      chosen.push({ trainStart: start, testStart, testEnd: Math.min(testStart + test, bars.length), best: runs[best]!, score: bestScore });
    }

    // The out-of-sample run: the first window's point from the first test bar to the last bar, the later windows' points taking over at their starts.
    const first = chosen[0]!;
    const testRun: StrategyRunSpec = { ...first.best, then: chosen.slice(1).map((window) => ({ at: window.testStart - first.testStart, params: window.best.params })) };
    const [outcome] = await runMany((part) => jobOf(part, request.initial_capital, slice(first.testStart, bars.length, warmupWanted)), [testRun]);
    if (!outcome) throw new Error('the walk-forward gave no outcome');
    const { equity } = outcome;
    const tripPnlsIn = (from: number, to: number) => outcome.trips.filter((trip) => trip.exitIndex >= from && trip.exitIndex < to).map((trip) => trip.pnl);

    const windows: TWalkForwardResult['windows'] = chosen.map((window) => {
      const from = window.testStart - first.testStart;
      const to = window.testEnd - first.testStart;
      // A window starts with the equity the one before it ended with (marked at its last close).
      const startCapital = from === 0 ? request.initial_capital : equity[from - 1]!;
      const metrics = spanMetrics({ initialCapital: startCapital, equity: equity.subarray(from, to), tripPnls: tripPnlsIn(from, to), firstClose: bars.close[window.testStart]!, lastClose: bars.close[window.testEnd - 1]!, ...spanOf(window.testStart, window.testEnd) });
      return {
        train_start: bars.dates[window.trainStart]!,
        train_end: bars.dates[window.testStart - 1]!,
        test_start: bars.dates[window.testStart]!,
        test_end: bars.dates[window.testEnd - 1]!,
        best_params: window.best.params,
        train_score: Number.isFinite(window.score) ? window.score : null,
        test: { final_capital: metrics.final_capital, total_return_pct: metrics.total_return_pct, sharpe_ratio: metrics.sharpe_ratio, max_drawdown_pct: metrics.max_drawdown_pct, total_trades: metrics.total_trades },
      };
    });
    const curveDates = bars.dates.slice(first.testStart);
    const overall = computeMetrics({ initialCapital: request.initial_capital, equity, dates: curveDates, tripPnls: outcome.trips.map((trip) => trip.pnl), firstClose: bars.close[first.testStart]!, lastClose: bars.close[bars.length - 1]!, assetClass });
    return {
      asset_class: assetClass,
      symbol: instrument.symbol,
      strategy_name: strategy.name,
      profile_name: profile.name,
      rank_by: request.rank_by,
      initial_capital: request.initial_capital,
      ...exitEchoOf(request),
      windows,
      equity_curve: curveIndices(equity).map((i) => ({ date: curveDates[i]!, equity: equity[i]! })),
      equity_curve_total: equity.length,
      ...overall,
      skipped,
    };
  };

  const getSweep = async ({ user, id }: { user: { id: number }; id: string }): Promise<TSweepResult> => {
    const row = await findSweep(db, { userId: user.id, id });
    if (!row) throw new AppError('NOT_FOUND', 'Sweep not found');
    const stored = row.result as Omit<TSweepResult, 'sweep_id' | 'created_at'>;
    // Sweeps stored before exits existed ran with none.
    return { ...stored, ...exitEchoOf(stored), sweep_id: row.id, created_at: row.createdAt.toISOString() };
  };

  const listSweepSummaries = async ({ user, query }: { user: { id: number }; query: TSweepListQuery }): Promise<TSweepList> => {
    const { rows, total } = await listSweeps(db, { userId: user.id, symbol: query.symbol, strategy: query.strategy?.toLowerCase(), page: query.page, size: query.size });
    const items = rows.map(sweepSummaryOf);
    return { items, total, page: query.page, size: query.size };
  };

  const get = async ({ user, id, family }: { user: { id: number }; id: string; family: TBacktestFamily }): Promise<TBacktestResult> => {
    const row = await findResult(db, { userId: user.id, id, assetClasses: FAMILY_ASSET_CLASSES[family] });
    if (!row) throw new AppError('NOT_FOUND', 'Backtest result not found');
    const stored = row.result as Omit<TBacktestResult, 'result_id' | 'created_at' | 'warmup_bars'> & { warmup_bars?: number };
    // Results stored before warm-up existed warmed on nothing, and before exits existed had none.
    return { ...stored, ...exitEchoOf(stored), warmup_bars: stored.warmup_bars ?? 0, result_id: row.id, created_at: row.createdAt.toISOString() };
  };

  const list = async ({ user, query, family }: { user: { id: number }; query: TBacktestListQuery; family: TBacktestFamily }): Promise<TBacktestList> => {
    const familyClasses: readonly TAssetClass[] = FAMILY_ASSET_CLASSES[family];
    const assetClasses = query.asset_class === undefined ? familyClasses : familyClasses.filter((assetClass) => assetClass === query.asset_class);
    if (query.asset_class !== undefined && assetClasses.length === 0) throw new AppError('INVALID_ASSET_CLASS', `asset_class must be one of ${familyClasses.join(', ')} here`);
    const { rows, total } = await listResults(db, { userId: user.id, assetClasses, symbol: query.symbol, strategy: query.strategy?.toLowerCase(), page: query.page, size: query.size });
    return { items: rows.map(toSummary), total, page: query.page, size: query.size };
  };

  /** Every registered strategy with its parameters as JSON schema (type, default, bounds, description). */
  const strategies = (): TStrategyList => ({
    items: STRATEGIES.map((strategy) => ({ name: strategy.name, description: strategy.description, params: paramsSchemaOf(strategy), asset_classes: [...strategy.assetClasses] })),
  });

  return { run, get, list, sweep, getSweep, listSweeps: listSweepSummaries, walkForward, strategies };
};
