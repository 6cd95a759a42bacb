// `npm install` / `npm ci` (the prepare script): builds the web console so `npm start` serves it
// at once. An install without dev dependencies (npm ci --omit=dev) has no Vite: it says how to
// build and leaves the service to answer /app/ with the same hint.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../node_modules/vite/package.json', import.meta.url))) {
  process.stderr.write('web console not built: Vite is not installed (dev dependencies); run `npm install` then `npm run build`\n');
  process.exit(0);
}
const result = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
