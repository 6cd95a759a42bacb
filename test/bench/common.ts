// What the benchmarks share: their integer settings from the environment. Nothing is imported
// here, so a load-generator child that needs only this loads nothing of the service.

/** A positive integer setting, or its default when unset; anything else stops the bench. */
export const positiveInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
};
