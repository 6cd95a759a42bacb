// How the entry points load the service's modules (server/entry.ts): drizzle-orm's own relative
// imports are resolved without Node's package.json lookups, to the very module Node resolves.
import { describe, expect, it } from 'vitest';
import { drizzleModuleOf } from '../../server/entry.ts';

const pgCoreTable = import.meta.resolve('drizzle-orm/pg-core/table');

describe('drizzleModuleOf', () => {
  it("resolves a drizzle-orm file's relative import to the module Node resolves, as an ES module", () => {
    expect(pgCoreTable).toContain('/node_modules/drizzle-orm/');
    expect(drizzleModuleOf('../entity.js', pgCoreTable)).toEqual({ url: import.meta.resolve('drizzle-orm/entity'), format: 'module', shortCircuit: true });
    expect(drizzleModuleOf('../sql/sql.js', pgCoreTable)?.url).toBe(import.meta.resolve('drizzle-orm/sql/sql'));
    expect(drizzleModuleOf('./table.js', import.meta.resolve('drizzle-orm/pg-core'))?.url).toBe(pgCoreTable);
  });

  it('leaves every other import to Node', () => {
    expect(drizzleModuleOf('drizzle-orm/pg-core', pgCoreTable)).toBeUndefined();
    expect(drizzleModuleOf('node:fs', pgCoreTable)).toBeUndefined();
    expect(drizzleModuleOf('./table.cjs', pgCoreTable)).toBeUndefined();
    expect(drizzleModuleOf('./queries.ts', import.meta.url)).toBeUndefined();
    expect(drizzleModuleOf('./index.js', import.meta.resolve('zod'))).toBeUndefined();
    expect(drizzleModuleOf('./table.js', undefined)).toBeUndefined();
  });
});
