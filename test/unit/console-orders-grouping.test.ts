// The blotter's grouping: a bracket's take-profit and stop-loss legs directly under their entry,
// pair-numbered legs too, a leg whose entry is not on the page left where it is, the page's order
// kept otherwise; and the source badge read from metadata.source.
import { describe, expect, it } from 'vitest';
import { bracketChildClientOrderId } from '../../contracts/orders.ts';
import { bracketLegOf, groupBracketLegs, legLabel, orderSourceOf, rowSourceOf } from '../../client/console/src/orders-grouping.ts';

const order = (client_order_id: string) => ({ client_order_id });
const tp = (entry: string, pair?: number) => bracketChildClientOrderId(entry, 'take_profit', pair);
const sl = (entry: string, pair?: number) => bracketChildClientOrderId(entry, 'stop_loss', pair);
const shape = (rows: ReturnType<typeof groupBracketLegs<{ client_order_id: string }>>) =>
  rows.map((row) => `${row.underEntry ? '  ' : ''}${row.order.client_order_id}${row.leg ? ` [${legLabel(row.leg)}]` : ''}`);

describe('bracketLegOf', () => {
  it('reads the leg, its pair and its entry from the contract’s suffixes', () => {
    expect(bracketLegOf(tp('e-1'))).toEqual({ kind: 'take_profit', pair: 1, entryClientOrderId: 'e-1' });
    expect(bracketLegOf(sl('e:1.x', 3))).toEqual({ kind: 'stop_loss', pair: 3, entryClientOrderId: 'e:1.x' });
  });

  it('takes any other id for an order of its own', () => {
    for (const id of ['e-1', 'e:tpx', 'e:tp.', 'e:tp.a', ':tp', 'tp', 'e:sl:x']) expect(bracketLegOf(id), id).toBeUndefined();
  });
});

describe('groupBracketLegs', () => {
  it('puts an entry’s two legs directly under it, whichever comes first on the page', () => {
    // Newest first, as the blotter lists them: the legs were placed after their entry filled.
    const page = [order('other'), order(sl('e')), order(tp('e')), order('e'), order('last')];
    expect(shape(groupBracketLegs(page))).toEqual(['other', 'e', `  ${sl('e')} [stop-loss leg]`, `  ${tp('e')} [take-profit leg]`, 'last']);
  });

  it('groups the pair-numbered legs of an entry that filled again under it too, labelled with their pair', () => {
    const page = [order(tp('e', 2)), order(sl('e', 2)), order(tp('e')), order(sl('e')), order('e')];
    expect(shape(groupBracketLegs(page))).toEqual([
      'e',
      `  ${tp('e', 2)} [take-profit leg (pair 2)]`,
      `  ${sl('e', 2)} [stop-loss leg (pair 2)]`,
      `  ${tp('e')} [take-profit leg]`,
      `  ${sl('e')} [stop-loss leg]`,
    ]);
  });

  it('leaves a leg whose entry is not on the page where it is, still labelled', () => {
    const page = [order('a'), order(tp('gone')), order('b'), order(sl('gone'))];
    expect(shape(groupBracketLegs(page))).toEqual(['a', `${tp('gone')} [take-profit leg]`, 'b', `${sl('gone')} [stop-loss leg]`]);
  });

  it('keeps the page’s order and every order, legs or not', () => {
    const page = ['c', 'b', tp('b'), 'a', sl('a'), 'z'].map(order);
    const rows = groupBracketLegs(page);
    expect(rows.map((row) => row.order.client_order_id)).toEqual(['c', 'b', tp('b'), 'a', sl('a'), 'z']);
    expect(rows).toHaveLength(page.length);
    expect(groupBracketLegs([])).toEqual([]);
  });

  it('gives back the orders themselves, not copies', () => {
    const entry = { client_order_id: 'e', qty: 1 };
    const leg = { client_order_id: tp('e'), qty: 1 };
    const rows = groupBracketLegs([leg, entry]);
    expect(rows[0]?.order).toBe(entry);
    expect(rows[1]?.order).toBe(leg);
    expect(rows[1]?.entry).toBe(entry);
    expect(rows[0]?.entry).toBeUndefined();
  });
});

describe('orderSourceOf', () => {
  it('reads who placed the order from metadata.source', () => {
    expect(orderSourceOf({ source: 'bot' })).toBe('bot');
    expect(orderSourceOf({ source: 'api', live: false })).toBe('api');
    expect(orderSourceOf({ source: 'webhook' })).toBe('webhook');
  });

  it('says nothing for an order without a source it knows', () => {
    expect(orderSourceOf({})).toBeUndefined();
    expect(orderSourceOf({ source: 'someone' })).toBeUndefined();
    expect(orderSourceOf({ source: 1 })).toBeUndefined();
  });
});

describe('rowSourceOf', () => {
  // The service places a bracket's legs when the entry fills: they carry no source of their own.
  const entry = { client_order_id: 'e', metadata: { source: 'bot' } };
  const leg = { client_order_id: tp('e'), metadata: { leg: 'take_profit' } };
  const orphan = { client_order_id: sl('gone'), metadata: { leg: 'stop_loss' } };

  it('shows a leg under its entry as placed for the entry’s source, and an order’s own source as its own', () => {
    const [entryRow, legRow] = groupBracketLegs([leg, entry]);
    expect(entryRow && rowSourceOf(entryRow)).toEqual({ source: 'bot', ofEntry: false });
    expect(legRow && rowSourceOf(legRow)).toEqual({ source: 'bot', ofEntry: true });
  });

  it('says nothing for a leg whose entry is not on the page', () => {
    const [orphanRow] = groupBracketLegs([orphan]);
    expect(orphanRow && rowSourceOf(orphanRow)).toBeUndefined();
  });
});
