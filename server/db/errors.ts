// What database errors mean, as both drivers report them.

/** Postgres' unique_violation (SQLSTATE 23505); drizzle wraps the driver's error in `cause`. */
export const isUniqueViolation = (error: unknown): boolean => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === '23505') return true;
  }
  return false;
};
