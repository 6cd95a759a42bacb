// Writes the console's theme stylesheet (client/console/src/theme/theme.generated.css) from its
// Mantine theme: run after changing client/console/src/theme/theme.ts. The unit test
// console-theme-css.test.ts fails while the committed file is out of date.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Imported by its URL rather than by name: a static import would bring Mantine's and React's
// types into the service's type-check, whose DOM-less globals they change.
const THEME_CSS_MODULE = new URL('../client/console/src/theme/theme-css.ts', import.meta.url).href;
const { themeCss } = (await import(THEME_CSS_MODULE)) as { themeCss: () => string };

const target = fileURLToPath(new URL('../client/console/src/theme/theme.generated.css', import.meta.url));
writeFileSync(target, themeCss());
console.log(`wrote ${target}`);
