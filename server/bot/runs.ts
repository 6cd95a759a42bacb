// A user's bot runs (GET /api/bot/runs) and a run's drift report (GET /api/bot/runs/{id}/drift):
// the bars the run decided on, replayed with its strategy and params, beside what it did.
import type { TBotDrift, TBotRun } from '../../contracts/bot.ts';
import type { TPageQuery } from '../../contracts/common.ts';
import { findStrategy } from '../backtest/strategies/index.ts';
import { defaultProfileFor } from '../brokers/fees.ts';
import { tickSizeOf } from '../brokers/simulator/prices.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { BotRunRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { driftOf } from './drift.ts';
import { findBotRun, listBotRuns, listRunFills, readBarsUntil } from './queries.ts';

/** The most bars a report replays (warm-up included): a run of 1-minute bars over a week and more. */
export const DRIFT_MAX_BARS = 20_000;

const runOf = (row: BotRunRow): TBotRun => ({
  run_id: row.runId,
  asset_class: row.assetClass,
  symbols: row.symbols,
  strategy_name: row.strategyName,
  strategy_params: row.strategyParams,
  live_mode: row.liveMode,
  timeframe: row.timeframe,
  started_at: row.startedAt.toISOString(),
  stopped_at: row.stoppedAt?.toISOString() ?? null,
  stopped_by: row.stoppedBy,
  halt_reason: row.haltReason,
  is_running: row.stoppedAt === null,
});

export const createBotRuns = ({ db, clock, instruments }: { db: Db; clock: Clock; instruments: Pick<Instruments, 'resolve'> }) => {
  const list = async ({ user, query }: { user: { id: number }; query: TPageQuery }) => {
    const { rows, total } = await listBotRuns(db, { userId: user.id, limit: query.size, offset: (query.page - 1) * query.size });
    return { items: rows.map(runOf), total, page: query.page, size: query.size };
  };

  /** 404 for a run the user does not have (another user's among them). */
  const drift = async ({ user, runId, symbol }: { user: { id: number }; runId: string; symbol?: string | undefined }): Promise<TBotDrift> => {
    const run = await findBotRun(db, { userId: user.id, runId });
    if (!run) throw new AppError('NOT_FOUND', `No bot run ${runId.slice(0, 64)}`);
    const instrument = await instruments.resolve({ symbol: symbol ?? run.symbols[0]!, assetClass: run.assetClass });
    if (!instrument || !run.symbols.includes(instrument.symbol)) throw new AppError('NOT_FOUND', `The run trades no symbol ${(symbol ?? '').slice(0, 32)}`);
    const definition = findStrategy(run.strategyName);
    const params = definition?.params.safeParse(run.strategyParams);
    // The run started with a strategy this build no longer has (or takes other params): nothing to replay.
    if (!definition || !params?.success) throw new AppError('STRATEGY_NOT_FOUND', `The run's strategy ${run.strategyName} cannot be replayed by this build`);
    const until = run.stoppedAt ?? clock.now();
    const [bars, live] = await Promise.all([
      readBarsUntil(db, { userId: user.id, assetClass: run.assetClass, symbol: instrument.symbol, timeframe: run.timeframe, until, limit: DRIFT_MAX_BARS }),
      listRunFills(db, { userId: user.id, runId, symbol: instrument.symbol }),
    ]);
    // Bars that began before the run only warm the indicators: the run decided on the ones after.
    const warmup = bars.filter((bar) => bar.start < run.startedAt).length;
    const report = driftOf({
      bars,
      warmup,
      strategy: definition.create(params.data),
      size: typeof params.data.size === 'number' ? params.data.size : 1,
      profile: defaultProfileFor(run.assetClass),
      tickSize: tickSizeOf(instrument),
      fractional: instrument.fractional,
      live,
    });
    return { run_id: run.runId, symbol: instrument.symbol, strategy_name: run.strategyName, timeframe: run.timeframe, ...report };
  };

  return { list, drift };
};
