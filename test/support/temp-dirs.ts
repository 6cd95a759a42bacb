// Every test file's setup (vitest.config.ts, setupFiles): the temporary directories it made with
// tempDir (DATA_DIRs, a second instance's, the process files' children's) go once it has run.
// Registered before the file's own hooks, this afterAll runs after them (hooks run as a stack),
// when whatever used the directories has stopped.
import { afterAll } from 'vitest';
import { removeTempDirs } from './template.ts';

afterAll(removeTempDirs);
