// The per-request context: who is asking, from where, and the services procedures call into.
import type { RequestOrigin } from '../audit/log.ts';
import type { Services } from '../services.ts';

/** Response details a procedure or middleware decides and the HTTP layer applies. */
export interface HttpResponseState {
  status: number | undefined;
  headers: Record<string, string>;
  /** Route template for logs and metrics (e.g. `/api/auth/me`). */
  route: string | undefined;
  userId: number | undefined;
}

export interface RequestState {
  origin: RequestOrigin;
  authorization: string | undefined;
  http: HttpResponseState;
  startedAt: bigint;
}

export interface Context {
  services: Services;
  origin: RequestOrigin;
  authorization: string | undefined;
  http: HttpResponseState;
}

export const contextFor = (services: Services, state: RequestState): Context => ({
  services,
  origin: state.origin,
  authorization: state.authorization,
  http: state.http,
});
