// The simulated broker's public face: the factory and what its callers need to name.
export type { AccountRef, InBooksPlacement, InBooksSteps, Simulator } from './api.ts';
export { ACCOUNT_CURRENCY, createSimulator, DEFAULT_LEASE_NAME, type SimulatorOptions } from './simulator.ts';
export { BROKER_NAME } from './books.ts';
export type { PriceUpdate } from './market.ts';
export { listFills } from './queries.ts';
export { findLease, releaseLease, takeLease } from '../../db/leases.ts';
