// The router's type for the client. In the repository it is the server's own; the package build
// (scripts/build-client.ts) replaces this module with the router's procedures written out in
// full, so a consumer's type check never reads the server's source or its dependencies.
export type { AppRouter } from '../server/routers/index.ts';
