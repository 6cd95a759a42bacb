// The retry schedule of alert deliveries: how many attempts, and how long to wait between them.
// Pure, so the schedule is tested without timers; the delivery queue does the waiting.

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 means no retry. */
  attempts: number;
  /** The wait before the first retry, before jitter. */
  baseMs: number;
  /** No wait is longer than this. */
  maxMs: number;
}

/**
 * The wait before retry number `retry` (1 = after the first failed attempt): the base doubled each
 * time up to the cap, with "equal jitter" — half of it fixed, half random — so the alerts of one
 * incident do not retry in lockstep, yet no wait collapses to zero.
 * `random` is a number in [0, 1), passed in so the result is a pure function of its inputs.
 */
export const retryDelayMs = (retry: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: number): number => {
  if (policy.baseMs <= 0 || policy.maxMs <= 0) return 0;
  // 2 ** a large exponent is Infinity, which the cap absorbs.
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  const share = Math.min(Math.max(random, 0), 1);
  return Math.round(ceiling / 2 + (share * ceiling) / 2);
};

/** Every wait of one delivery, in order: `attempts - 1` of them. */
export const backoffSchedule = (policy: RetryPolicy, random: () => number = Math.random): number[] =>
  Array.from({ length: Math.max(0, policy.attempts - 1) }, (_, index) => retryDelayMs(index + 1, policy, random()));

/** Refuses a policy that would never try, or wait backwards; a programming error, so it throws. */
export const checkRetryPolicy = (policy: RetryPolicy): RetryPolicy => {
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) throw new RangeError('retry.attempts must be an integer of at least 1');
  if (!(policy.baseMs >= 0) || !(policy.maxMs >= policy.baseMs)) throw new RangeError('retry needs 0 <= baseMs <= maxMs');
  return policy;
};
