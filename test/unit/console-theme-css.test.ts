// The console's theme stylesheet (client/console/src/theme/theme.generated.css) is what its
// Mantine theme generates: the CSP keeps MantineProvider from writing its variables at run time,
// so the committed file is the theme. Out of date after a theme change: run
// `node scripts/console-theme-css.ts`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// Imported by its URL rather than by name: a static import would bring Mantine's and React's
// types into the service's type-check, whose DOM-less globals they change.
const THEME_CSS_MODULE = new URL('../../client/console/src/theme/theme-css.ts', import.meta.url).href;
const { themeCss } = (await import(THEME_CSS_MODULE)) as { themeCss: () => string };

const GENERATED = new URL('../../client/console/src/theme/theme.generated.css', import.meta.url);

describe('the console’s theme stylesheet', () => {
  it('is what the theme generates (run node scripts/console-theme-css.ts after a theme change)', () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(themeCss());
  });

  it('holds both schemes and the classes hiddenFrom and visibleFrom need', () => {
    const css = themeCss();
    expect(css).toContain(":root[data-mantine-color-scheme='light'] {\n  --mantine-color-scheme: light;");
    expect(css).toContain(":root[data-mantine-color-scheme='dark'] {\n  --mantine-color-scheme: dark;");
    expect(css).toContain('.mantine-hidden-from-sm');
    expect(css).toContain('--console-color-gain');
  });
});
