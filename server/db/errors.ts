// What database errors mean, as both drivers report them.

/**
 * Postgres' unique_violation (SQLSTATE 23505), of the named constraint when one is given; drizzle
 * wraps the driver's error in `cause`, and the drivers name the constraint differently.
 */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const { code, constraint_name: postgresJs, constraint: pglite } = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (code === '23505') return constraint === undefined || (postgresJs ?? pglite) === constraint;
  }
  return false;
};
