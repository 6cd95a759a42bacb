// How long the fake brokers keep an idle connection open. Node's default is 5 s, and the client
// (fetch, with its own 4 s) reuses a connection until then: on a loaded machine, where both timers
// fire late in one event loop, a request could go out on a connection the fake was closing that
// moment and fail with ECONNRESET, a failure no test is about. Brokers keep idle connections for a
// minute or more; so do the fakes.
import type { Server } from 'node:http';

const KEEP_ALIVE_MS = 65_000;

/** Keeps the fake's idle connections open as long as a broker does. */
export const keepConnectionsLikeABroker = (server: Server): void => {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
};
