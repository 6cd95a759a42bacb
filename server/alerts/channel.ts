// The shapes every delivery channel shares: the alert as queued, and what one attempt reports.

export type Severity = 'critical' | 'info';

/** What a caller raises. `data` is for machines (ids, amounts); never put a secret in it. */
export interface Alert {
  /** A stable, grep-able name: 'first_live_order', 'kill_switch_warning'. */
  kind: string;
  title: string;
  text: string;
  data?: Record<string, unknown>;
}

/** An alert as it waits for delivery: a detached copy, stamped when it was raised. */
export interface QueuedAlert {
  severity: Severity;
  kind: string;
  title: string;
  text: string;
  data: Record<string, unknown>;
  /** ISO instant from the injected clock. */
  at: string;
}

/** Why an attempt failed, as logs may show it: already free of secrets. */
export interface AttemptFailure {
  reason: 'timeout' | 'aborted' | 'http_status' | 'network' | 'smtp';
  status?: number;
  code?: string;
  responseCode?: number;
  message?: string;
}

export type AttemptResult = { ok: true } | { ok: false; permanent: boolean; failure: AttemptFailure };

export interface Channel {
  readonly name: 'webhook' | 'email';
  /** Where it delivers, safe to log (an origin, a mail host). */
  readonly target: string;
  /** One attempt. Resolves with the outcome, never rejects; stops when `signal` aborts. */
  attempt(alert: QueuedAlert, signal: AbortSignal): Promise<AttemptResult>;
  close(): void;
}

/** Timeout and abort both arrive as a rejection with the signal's reason; tell them apart. */
export const abortFailure = (signal: AbortSignal): AttemptResult | undefined => {
  if (!signal.aborted) return undefined;
  const timedOut = signal.reason instanceof Error && signal.reason.name === 'TimeoutError';
  return timedOut ? { ok: false, permanent: false, failure: { reason: 'timeout' } } : { ok: false, permanent: true, failure: { reason: 'aborted' } };
};
