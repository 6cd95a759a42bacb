// What working orders hold at the simulated broker, judged under the account's lock: buying
// power is the cash less what working buys hold (cancel, fill and replace release or re-reserve
// it at once), and a sell may take the held quantity less what working sells hold, a bracket's
// two children counted once. Through the Broker interface on a real database.
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../server/brokers/simulator/index.ts';
import { BrokerRejectedError, FundsRejectedError } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { upsertInstrument } from '../../server/instruments/queries.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSimAccount, simOrder, type SimAccount } from '../support/sim-accounts.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');

let server: TestServer;
let sim: Simulator;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  sim = await createSimulator({
    db: server.services.db,
    clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: { crypto: '100000', us_equity: '100000', kr_equity: '100000000' },
    tickIntervalMs: 0,
    liquidityLotsPerTick: 0,
    leaseName: 'simulator-funds-test',
    marketHours: 'enforce',
    outageReloadMs: 50,
  });
});
afterAll(async () => {
  await sim?.stop();
  await server?.stop();
});

let instrumentCount = 0;
/** A fresh crypto instrument per test at an operator's price (fee 0.1 %, slippage 5 bp). */
const newInstrument = async (price: string) => {
  const symbol = `FND${++instrumentCount}/USDT`;
  await upsertInstrument(server.services.db, {
    assetClass: 'crypto',
    symbol,
    exchange: 'BINANCE',
    currency: 'USDT',
    name: `Funds test ${instrumentCount}`,
    referencePrice: price,
    tickRule: 'fixed',
    tickSize: '0.01',
    lotSize: '0.001',
    fractional: true,
    at: clock.now(),
  });
  await sim.setPrice({ assetClass: 'crypto', symbol, price });
  return symbol;
};

const openAccount = (): Promise<SimAccount> => openSimAccount({ server, on: sim, assetClass: 'crypto', prefix: 'simfnd' });

const refusal = async (promise: Promise<unknown>): Promise<FundsRejectedError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FundsRejectedError);
  expect(error).toBeInstanceOf(BrokerRejectedError);
  return error as FundsRejectedError;
};

/** A resting limit buy of 100 at 378: 37,800 + the 0.1 % fee = 37,837.8 held. */
const restingBuy = (symbol: string, limitPrice = '378') => simOrder({ symbol, side: 'buy', qty: '100', orderType: 'limit', limitPrice });

describe('buying power reserves working buys', () => {
  it('holds each resting buy at its limit with its fee; a buy above what is left is refused; a cancel releases it', async () => {
    const symbol = await newInstrument('1000');
    const account = await openAccount();
    const first = await account.broker.placeOrder(restingBuy(symbol));
    await account.broker.placeOrder(restingBuy(symbol));
    expect(await account.broker.account()).toMatchObject({ cash: '100000', buyingPower: '24324.4' });
    expect((await account.broker.snapshot()).account.buyingPower).toBe('24324.4');

    const third = restingBuy(symbol);
    const refused = await refusal(account.broker.placeOrder(third));
    expect(refused.message).toMatch(/insufficient funds: the order needs 37837\.8 USDT, cash is 100000; .* buying power\) is 24324\.4/);
    expect(refused.gateMessage).toBe('The buy costs 37837.8 (100 × 378 + fee 37.8), more than the buying power 24324.4');
    expect(await account.broker.getOrder({ clientOrderId: third.clientOrderId })).toBeUndefined();

    await account.broker.cancelOrder({ brokerOrderId: first.brokerOrderId });
    expect((await account.broker.account()).buyingPower).toBe('62162.2');
    await account.broker.placeOrder(restingBuy(symbol));
  });

  it('a fill turns the reservation into spent cash: buying power is the cash again', async () => {
    const symbol = await newInstrument('100');
    const account = await openAccount();
    const buy = await account.broker.placeOrder(simOrder({ symbol, side: 'buy', qty: '10', orderType: 'limit', limitPrice: '90' }));
    // 10 × 90 + 0.9 fee.
    expect((await account.broker.account()).buyingPower).toBe('99099.1');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '89' });
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const after = await account.broker.account();
    expect(after.buyingPower).toBe(after.cash);
    expect(new Decimal(after.cash).lt('100000')).toBe(true);
  });

  it('a replace is judged with its own reservation released, against what the other buys leave', async () => {
    const symbol = await newInstrument('1000');
    const account = await openAccount();
    const first = await account.broker.placeOrder(restingBuy(symbol));
    await account.broker.placeOrder(restingBuy(symbol));
    // Its own 37,837.8 released, 62,162.2 is left: 100 × 622 + 62.2 = 62,262.2 is too much.
    const refused = await refusal(account.broker.replaceOrder({ brokerOrderId: first.brokerOrderId, limitPrice: '622' }));
    expect(refused.gateMessage).toBe('The buy costs 62262.2 (100 × 622 + fee 62.2), more than the buying power 62162.2');
    // 100 × 620 + 62 = 62,062 fits, and holds that much from then on.
    await account.broker.replaceOrder({ brokerOrderId: first.brokerOrderId, limitPrice: '620' });
    expect((await account.broker.account()).buyingPower).toBe('100.2');
  });
});

describe('quantity available to sell', () => {
  it("counts a bracket's two children once and says what is held and what working sells hold", async () => {
    const symbol = await newInstrument('1000');
    const account = await openAccount();
    const entry = await account.broker.placeOrder(simOrder({ symbol, side: 'buy', qty: '1', bracket: { takeProfit: '1100', stopLoss: '900', stopLossLimit: null } }));
    await account.seen({ type: 'fill', broker_order_id: entry.brokerOrderId });
    await sim.idle();
    const refused = await refusal(account.broker.placeOrder(simOrder({ symbol, side: 'sell', qty: '0.5' })));
    expect(refused.message).toMatch(/selling 0\.5 .* with 0 available \(1 held, 1 in working sells; no short selling\)/);
    expect(refused.gateMessage).toBe(`The sell of 0.5 ${symbol} exceeds the 0 available to sell: 1 held, 1 in working sells; short selling is not allowed`);
  });
});
