// The single source of every wire shape: the server and the client both import from here.
export * from './errors.ts';
export * from './common.ts';
export * from './auth.ts';
export * from './admin.ts';
export * from './health.ts';
export * from './symbols.ts';
export * from './instruments.ts';
export * from './marketdata.ts';
export * from './keys.ts';
export * from './simulator.ts';
export * from './brokers.ts';
export * from './orders.ts';
export * from './events.ts';
export * from './backtest.ts';
export * from './analysis.ts';
export * from './live.ts';
export * from './bot.ts';
