// The whole schema, one file per aggregate.
export * from './users.ts';
export * from './auth.ts';
export * from './audit.ts';
export * from './system.ts';
export * from './instruments.ts';
export * from './keys.ts';
export * from './simulator.ts';
export * from './orders.ts';
export * from './events.ts';
export * from './backtests.ts';
export * from './analysis.ts';
export * from './live.ts';
export * from './bots.ts';
export * from './broker-tokens.ts';
export * from './ledger.ts';
export * from './notifications.ts';
export * from './signals.ts';
