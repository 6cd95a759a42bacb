import { cpSync, rmSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
const extra = process.argv.slice(2);
for (let i = 0; i < 8; i++) {
  const dir = `/tmp/tplc${i}`;
  cpSync('/tmp/tpl/pgdata', `${dir}/pgdata`, { recursive: true });
  const t1 = performance.now(); const c0 = process.cpuUsage();
  const pg = await PGlite.create(`${dir}/pgdata`, { startParams: [...(PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams, ...extra] });
  await pg.query('select 1');
  const t2 = performance.now();
  await pg.close();
  const c = process.cpuUsage(c0);
  rmSync(dir, { recursive: true, force: true });
  console.log(`${extra.join(' ')} open ${Math.round(t2 - t1)} cpu user ${Math.round(c.user / 1000)} sys ${Math.round(c.system / 1000)}`);
}
