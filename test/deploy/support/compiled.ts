/**
 * The compiled build (`dist/`, `npm run build`) the container image runs, brought up to date
 * for tests that run it. Any number of test files may ask at once: `buildIfStale` builds once
 * under a lock while the others wait.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { projectRoot } from './recipes.js';

export async function ensureCompiledBuild(): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [
      '--input-type=module',
      '--eval',
      "const { buildIfStale } = await import('./scripts/build/build.mjs'); await buildIfStale({ quiet: true });",
    ],
    { cwd: projectRoot, timeout: 300_000 },
  );
}
