// Rows of several lists (one per asset class) merged newest first: the overview's latest fills.

/** The `limit` newest rows of all the lists by `updated_at`, newest first (ties keep the lists' order). */
export const newestFirst = <T extends { readonly updated_at: string }>(lists: readonly (readonly T[])[], limit: number): T[] =>
  lists
    .flat()
    .sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at))
    .slice(0, limit);
