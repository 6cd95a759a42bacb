// A model-based test of one paper crypto account (DESIGN §6): random sequences of placements
// (market, limit, stop, bracket; buys and sells), replaces, cancels, cancel-all, closes, price
// moves, resets, locks and unlocks run against the real service in-process and against an
// independent model (account-model.ts); after each command the answer, cash, buying power,
// position and every order's status and filled quantity must agree.
//
// Bounded in CI: a fixed seed and a few runs. `npm run test:model -- --runs 2000` runs many more
// (MODEL_RUNS and MODEL_SEED do the same through the environment).
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { AccountModel, type Rules } from './account-model.ts';
import { Harness, START_PRICE } from './account-harness.ts';
import { commandArbitraries } from './account-commands.ts';

/**
 * DESIGN's rules the service does not follow yet (other work is building them). Off, the
 * generators steer around every command the rule decides; turn one on when its rule lands (and
 * its regression case below from `it.fails` to `it`).
 */
const BUILT: Rules = {
  reservation: false,
  ocoAvailability: false,
  lockExits: false,
  closeCancelsSells: false,
  replaceGates: false,
  stopTriggerReject: false,
  positionSizing: false,
  tickGrid: false,
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
