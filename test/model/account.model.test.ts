// A model-based test of one paper crypto account (DESIGN §6): random sequences of placements
// (market, limit, stop, trailing stop, bracket with a stop or a trailing stop leg, oto, oco; buys
// and sells), replaces (of a trailing stop: its trail), cancels, cancel-all, closes, price moves,
// resets, locks and unlocks run against the real service in-process and against an independent
// model (account-model.ts); after each command the answer, cash, buying power, position and every
// order's status and filled quantity (and a working trailing stop's stop) must agree.
//
// Bounded in CI (it runs in the integration project): a fixed seed and a few runs. `npm run test:model -- --runs 2000` runs many more
// (MODEL_RUNS and MODEL_SEED do the same through the environment).
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { AccountModel } from './account-model.ts';
import type { Rules, TKind, TRule } from './model-types.ts';
import { Harness, START_PRICE } from './account-harness.ts';
import { CancelCommand, commandArbitraries, OcoCommand, PlaceCommand, PriceCommand, ReplaceCommand, SimpleCommand, TrailReplaceCommand, type PlaceSpec, type TrailSpec } from './account-commands.ts';

/**
 * DESIGN's rules the service does not follow yet (other work is building them). Off, the
 * generators steer around every command the rule decides; turn one on when its rule lands (and
 * its regression case below from `it.fails` to `it`).
 */
const BUILT: Rules = {
  reservation: true,
  ocoAvailability: true,
  lockExits: true,
  closeCancelsSells: true,
  replaceGates: true,
  stopTriggerReject: true,
  positionSizing: true,
  tickGrid: true,
  lockKeepsSells: true,
  trailingStops: true,
  trailingLegs: true,
  ocoOrders: true,
  otoOrders: true,
  trailReplace: true,
  // The gate releases only the replaced leg and counts its sibling: a replace of a bracket's or an
  // oco's leg is refused INSUFFICIENT_FUNDS when the pair holds the position (see its regression below).
  pairLegReplace: true,
};

/** MODEL_RULES=all, or a comma list of rule names, switches rules on for one run (to look for the known bugs). */
const fromEnv = (value: string | undefined): Partial<Rules> => {
  if (!value) return {};
  const names = value === 'all' ? Object.keys(BUILT) : value.split(',').map((name) => name.trim());
  return Object.fromEntries(names.map((name) => [name, true]));
};
const RULES: Rules = { ...BUILT, ...fromEnv(process.env.MODEL_RULES) };

const RUNS = Number(process.env.MODEL_RUNS || 12);
const SEED = Number(process.env.MODEL_SEED || 20_260_310);
const MAX_COMMANDS = 25;

// A Tuesday afternoon (UTC); crypto trades around the clock. Each command moves it one second.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', RATE_LIMIT_ORDERS_PER_MIN: '1000000' }, undefined, { clock });
});
afterAll(async () => {
  await server?.stop();
});

/** One run: a fresh account, the model at the start price, the commands in turn. */
const runCommands = async (commands: Iterable<fc.AsyncCommand<AccountModel, Harness>>) => {
  const real = await Harness.open(server, clock);
  await fc.asyncModelRun(() => ({ model: new AccountModel(START_PRICE), real }), commands);
  // MODEL_DEBUG=1 prints each run's commands (those that ran), to see what the generators reach.
  if (process.env.MODEL_DEBUG) console.log([...commands].map((command) => command.toString()).join(', '));
};

describe('one paper account against its model', () => {
  it(
    `agrees with the model over ${RUNS} random runs (seed ${SEED})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commandArbitraries(RULES), { maxCommands: MAX_COMMANDS, size: 'max' }), (commands) => runCommands(commands)),
        { seed: SEED, numRuns: RUNS, endOnFailure: process.env.MODEL_SHRINK !== '1' },
      );
    },
    Math.max(60_000, RUNS * 5_000),
  );
});

/** A fixed sequence on a fresh account: every command must run (its `check` holds) and agree with the model. */
const replay = async (rules: Rules, make: (rules: Rules) => fc.AsyncCommand<AccountModel, Harness>[]) => {
  const real = await Harness.open(server, clock);
  const model = new AccountModel(START_PRICE);
  for (const command of make(rules)) {
    expect(command.check(model), `${command.toString()} runs`).toBe(true);
    await command.run(model, real);
  }
};
const withRule = (rule: TRule): Rules => ({ ...RULES, [rule]: true });
const buy = (kind: TKind, lots: number, permille = 0, bracket: PlaceSpec['bracket'] = null): PlaceSpec => ({ side: 'buy', kind, lots, permille, bracket, offGrid: false });
const sell = (kind: TKind, lots: number, permille = 0): PlaceSpec => ({ side: 'sell', kind, lots, permille, bracket: null, offGrid: false });
const trailing = (side: 'buy' | 'sell', lots: number, trail: TrailSpec): PlaceSpec => ({ side, kind: 'trailing', lots, permille: 0, bracket: null, offGrid: false, trail });

// The shrunk counterexamples the random suite found with each rule switched on (seed 20260310),
// kept as fixed cases. `it.fails` marks a rule the service does not follow yet: when it lands,
// turn its switch on above and this case into a plain `it`.
describe('regressions, one per rule', () => {
  it('reservation: a working buy stop reserves its notional and fee from the buying power', () =>
    replay(withRule('reservation'), (rules) => [new PlaceCommand(buy('stop', 1, 1), rules)]));

  it('ocoAvailability: a bracket’s OCO pair counts once in the quantity available to sell', () =>
    replay(withRule('ocoAvailability'), (rules) => [new PlaceCommand(buy('market', 1), rules), new PlaceCommand(buy('market', 1, 0, { tp: 2, sl: 2 }), rules), new PlaceCommand(sell('market', 1), rules)]));

  it('lockExits: under a lock a sell of what is held is judged by the other checks only (accepted)', () =>
    replay(withRule('lockExits'), (rules) => [new PlaceCommand(buy('market', 1_000), rules), new SimpleCommand('lock', rules), new PlaceCommand(sell('market', 25_000), rules)]));

  it('lockExits: under a lock a sell of nothing held is INSUFFICIENT_FUNDS, not the lock’s refusal', () =>
    replay(withRule('lockExits'), (rules) => [new SimpleCommand('lock', rules), new PlaceCommand(sell('market', 1), rules)]));

  it('closeCancelsSells: a close cancels the bracket’s children, then sells the whole position at market', () =>
    replay(withRule('closeCancelsSells'), (rules) => [new PlaceCommand(buy('market', 1, 0, { tp: 2, sl: 2 }), rules), new SimpleCommand('close', rules)]));

  it('replaceGates: a replace is judged by position sizing as the order it would become', () =>
    replay(withRule('replaceGates'), (rules) => [new PlaceCommand(buy('limit', 1, -1), rules), new ReplaceCommand({ pick: 0, lots: 44_423, permille: 1 }, rules)]));

  it('stopTriggerReject: a buy stop at the last price would trigger at once: BROKER_REJECTED', () =>
    replay(withRule('stopTriggerReject'), (rules) => [new PlaceCommand(buy('stop', 1, 0), rules)]));

  it('positionSizing: stacking buys cannot pass what one buy may not (0.4 BTC held, then 0.1 more)', () =>
    replay(withRule('positionSizing'), (rules) => [new PlaceCommand(buy('market', 40_000), rules), new PlaceCommand(buy('market', 10_000), rules)]));

  it('tickGrid: a crypto stop half a tick off the grid is RISK_RULE_VIOLATION', () =>
    replay(withRule('tickGrid'), (rules) => [new PlaceCommand({ ...buy('stop', 1, 0), offGrid: true }, rules)]));

  it('lockKeepsSells: the lock cancels working buys and keeps a plain working sell', () =>
    replay(withRule('lockKeepsSells'), (rules) => [new PlaceCommand(buy('market', 1), rules), new PlaceCommand(sell('limit', 50_000, 1), rules), new SimpleCommand('lock', rules)]));

  it('positionSizing: a stop leg above the price (a marketable limit entry’s bracket) bounds the held quantity’s risk at nothing, not the default stop', () =>
    replay(withRule('positionSizing'), (rules) => [new PlaceCommand(buy('limit', 34_323, 3, { tp: 2, sl: 2 }), rules), new PlaceCommand(buy('market', 10_096, 0), rules)]));

  it('positionSizing: a marketable limit buy whose bracket stop sits above its expected fill risks nothing below it', () =>
    replay(withRule('positionSizing'), (rules) => [new PlaceCommand(buy('limit', 44_423, 3, { tp: 2, sl: 2 }), rules)]));

  it('positionSizing: a buy that adds no risk (its bracket stop above its expected fill) passes a position the fees left just over the cap (seed 2)', () =>
    replay(withRule('positionSizing'), (rules) => [new PlaceCommand(buy('market', 44_418), rules), new PlaceCommand(buy('limit', 10_000, 3, { tp: 2, sl: 2 }), rules)]));

  it('pairLegReplace: a new trail for an oco’s trailing stop leg is judged with the pair’s hold released (once refused INSUFFICIENT_FUNDS)', () =>
    replay(withRule('pairLegReplace'), (rules) => [
      new PlaceCommand(buy('market', 1), rules),
      new OcoCommand({ lots: 1, tp: 1, sl: 0, trail: { cents: 500 }, offGrid: false }, rules),
      new TrailReplaceCommand({ pick: 0, trail: { bp: 5 }, lots: null, offGrid: false }, rules),
    ]));

  // What the model checks beyond the switched rules, on paths the random runs reach less often.
  it('a trailing sell stop follows a new high, not a fall, and sells at market at its stop; a new trail is set from its mark, or refused when it would trigger at once', () =>
    replay(RULES, (rules) => [
      new PlaceCommand(buy('market', 2_000), rules),
      new PlaceCommand(trailing('sell', 25_000, { bp: 100 }), rules),
      new PlaceCommand(trailing('sell', 25_000, { cents: 150_000 }), rules),
      new PriceCommand(10, rules),
      new PriceCommand(5, rules),
      new TrailReplaceCommand({ pick: 1, trail: { bp: 5 }, lots: null, offGrid: false }, rules),
      new TrailReplaceCommand({ pick: 1, trail: { bp: 80 }, lots: null, offGrid: false }, rules),
      new PriceCommand(-5, rules),
    ]));

  it('a trailing buy stop reserves at its current stop, follows a new low down and buys at market at its stop', () =>
    replay(RULES, (rules) => [
      new PlaceCommand(trailing('buy', 10_000, { cents: 50_000 }), rules),
      new PlaceCommand(buy('limit', 5_000, -15), rules),
      new PriceCommand(-10, rules),
      new TrailReplaceCommand({ pick: 0, trail: { bp: 30 }, lots: 12_000, offGrid: false }, rules),
      new PriceCommand(-4, rules),
    ]));

  it('a bracket’s trailing stop leg marks from the entry’s fill; an oto’s one leg works alone; an oco holds the units once and its limit’s fill cancels its stop leg', () =>
    replay(RULES, (rules) => [
      new PlaceCommand(buy('market', 1_000, 0, { tp: 10, sl: 5, trail: { bp: 50 } }), rules),
      new PlaceCommand(buy('market', 1_000, 0, { tp: 10, sl: 5, only: 'sl' }), rules),
      new PlaceCommand(buy('market', 1_000, 0, { tp: 10, sl: 5, only: 'tp' }), rules),
      new PriceCommand(5, rules),
      new PlaceCommand(buy('market', 4_000), rules),
      new OcoCommand({ lots: 10_000, tp: 3, sl: 10, offGrid: false }, rules),
      new OcoCommand({ lots: 10_000, tp: 20, sl: 0, trail: { cents: 20_000 }, offGrid: false }, rules),
      new PlaceCommand(sell('market', 8_000), rules),
      new PriceCommand(9, rules),
      new PriceCommand(-3, rules),
    ]));

  it('a bracket entry becomes an OCO pair; the take-profit fills and cancels the stop-loss; cancel, cancel-all and reset agree', () =>
    replay(RULES, (rules) => [
      new PlaceCommand(buy('market', 2_000, 0, { tp: 5, sl: 5 }), rules),
      new PriceCommand(8, rules),
      new PlaceCommand(buy('limit', 1_000, -10), rules),
      new CancelCommand(3, rules),
      new PlaceCommand(buy('limit', 1_000, -10), rules),
      new SimpleCommand('cancelAll', rules),
      new PlaceCommand(buy('market', 500), rules),
      new SimpleCommand('reset', rules),
    ]));
});
