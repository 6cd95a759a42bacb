// The KR broker adapter (KIS Open API, domestic stock): what the rest of the service imports.
export { createKisBroker, kisLimiters, KIS_HOST_REQUESTS_PER_SECOND, KIS_LIVE_REQUESTS_PER_SECOND, KIS_PAPER_REQUESTS_PER_SECOND, type KisBroker, type KisBrokerOptions } from './adapter.ts';
export { KisRefusedError } from './http.ts';
export { KIS_MAX_SUBSCRIPTIONS, KIS_QUOTES_LIVE_URL, KIS_QUOTES_PAPER_URL, kisQuoteStreamUrl } from './quote-wire.ts';
export type { KisQuoteStreamTuning } from './quotes.ts';
export { createMemoryLinkStore, unlinkedCandidates, type KisOrderIntent, type KisOrderLink, type KisOrderLinkStore } from './links.ts';
export { createMemoryTokenStore, sharedTokenStore, tokenStoreKey, type KisStoredToken, type KisTokenStore } from './token.ts';
export { KIS_LIVE_URL, KIS_PAPER_URL } from './wire.ts';
