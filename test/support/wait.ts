// Waiting without sleeping blind: poll a condition until it holds or a deadline passes.
/**
 * How long a helper waits for what a test waits on before it gives up: a safety net only (what is
 * waited for comes in milliseconds), roomy enough that a loaded machine never meets it, and within
 * vitest's 30 s per test so a test that waits in vain fails with the helper's message.
 */
export const SAFETY_NET_MS = 20_000;

export const waitFor = async <T>(probe: () => Promise<T>, accept: (value: T) => boolean, deadlineMs = SAFETY_NET_MS): Promise<T> => {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${deadlineMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
