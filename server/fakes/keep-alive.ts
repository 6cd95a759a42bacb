// How long the fake brokers keep an idle connection open. Node's default is 5 s, and the client
// (fetch, with its own 4 s) reuses a connection until then: on a loaded machine, where both timers
// fire late in one event loop, a request could go out on a connection the fake was closing that
// moment and fail with ECONNRESET, a failure no test is about. Brokers keep idle connections for a
// minute or more; so do the fakes.
import type { Server } from 'node:http';

export const FAKE_KEEP_ALIVE_MS = 65_000;

/** Sets the fake's keep-alive to a broker's; returns the server. */
export const keepConnectionsLikeABroker = <T extends Server>(server: T): T => {
  server.keepAliveTimeout = FAKE_KEEP_ALIVE_MS;
  return server;
};
