// The US broker adapter (Alpaca Trading API v2): what the rest of the service imports.
export { createAlpacaBroker, dataStreamUrlOf, ALPACA_DATA_URL, ALPACA_LIVE_URL, ALPACA_PAPER_URL, type AlpacaBrokerOptions } from './adapter.ts';
export { AlpacaRefusedError } from './http.ts';
export { ALPACA_REQUESTS_PER_MINUTE, createLimiterRegistry, createRequestLimiter, sharedLimiters, type LimiterRegistry, type RequestLimiter } from './limiter.ts';
export type { StreamBackoff, StreamRetry } from './keep-alive.ts';
