// Waiting without sleeping blind: poll a condition until it holds or a deadline passes.
export const waitFor = async <T>(probe: () => Promise<T>, accept: (value: T) => boolean, deadlineMs = 10_000): Promise<T> => {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${deadlineMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
