// The web console's first load (issue 34's budget): what index.html makes the browser fetch before
// the first page shows (its scripts, the chunks it preloads, its styles) stays within 250 KB
// gzipped, and the charting library is not among it (the chart pages load it when opened).
// Reads the build `npm install` made (client/console/dist); `npm run build` makes it again.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const DIST = path.resolve(import.meta.dirname, '../../client/console/dist');
const BUDGET_BYTES = 250_000;

/** The assets index.html references: module scripts, module preloads and stylesheets, by their path under dist. */
const firstLoadAssets = (html: string): string[] =>
  [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*\brel="(?:modulepreload|stylesheet)"[^>]*\bhref)="\/app\/([^"]+)"/g)].map((match) => match[1]!);

describe('the console’s first load', () => {
  const index = path.join(DIST, 'index.html');

  it('is built (npm install builds it; npm run build builds it again)', () => {
    expect(existsSync(index), `${index} is missing: run npm run build`).toBe(true);
  });

  it.runIf(existsSync(index))(`stays within ${BUDGET_BYTES / 1000} KB of gzipped JavaScript and CSS, without the charting library`, () => {
    const assets = firstLoadAssets(readFileSync(index, 'utf8'));
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    expect(assets.some((asset) => asset.endsWith('.css'))).toBe(true);
    let gzipped = 0;
    for (const asset of assets) {
      const body = readFileSync(path.join(DIST, asset));
      // lightweight-charts writes its attribution link under this id: its code is in a lazy chunk only.
      expect(body.includes('tv-attr-logo'), `${asset} holds the charting library`).toBe(false);
      gzipped += gzipSync(body, { level: 9 }).length;
    }
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
