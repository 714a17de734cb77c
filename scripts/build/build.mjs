// `npm run build`: compiles Trellis to dist/ (tsconfig.build.json), prebuilds the workflow
// bundle beside the compiled worker, so production runs plain JavaScript and a worker start needs
// no webpack run, and builds the console's static files (console/dist, build-console.mjs). Plain
// JavaScript itself: building must not need a TypeScript loader.
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole, buildConsoleIfStale } from './build-console.mjs';
import { lockBuild } from './build-lock.mjs';
import { buildStamp, isBuildCurrent, writeBuildStamp } from './build-state.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** @param {{ say?: (line: string) => void }} options where the progress lines go */
export async function build({ say = (line) => console.log(line) } = {}) {
  const started = Date.now();
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    throw new Error(
      'Cannot build Trellis: TypeScript is not installed (npm install, with dev dependencies).',
    );
  }
  say('build: compiling TypeScript to dist/');
  const compiled = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (compiled.status !== 0) throw new Error('build: tsc failed (errors above)');
  // Compiled modules import each other's rooms by name (`#store/…`) as the sources do: dist/ gets
  // a package.json of its own whose `imports` name the compiled files, not the sources.
  const { imports } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  await writeFile(
    path.join(root, 'dist', 'package.json'),
    `${JSON.stringify({ private: true, type: 'module', imports }, null, 2)}\n`,
  );

  say('build: bundling the workflow code (plain, and traced for Telemetry.OtlpEndpoint)');
  const worker = await import('../../dist/workflows-worker/src/worker.js');
  const { createLogger } = await import('../../dist/core/src/platform/logging.js');
  const logger = createLogger({ Level: 'warn' });
  const bundle = await worker.buildWorkflowBundle(logger);
  await writeFile(worker.prebuiltBundlePath, bundle.code);
  const traced = await worker.buildWorkflowBundle(logger, { traced: true });
  await writeFile(worker.prebuiltTracedBundlePath, traced.code);
  await writeBuildStamp(await buildStamp());
  await buildConsole({ say });
  say(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Builds unless dist/ is already a build of the current sources. Safe to call from several
 * processes at once (two test files, two `npm start`s): one builds while the others wait, then
 * find dist/ current, rather than two compilers writing the same files.
 */
export async function buildIfStale(options) {
  if (await isBuildCurrent()) return buildConsoleIfStale(options);
  const release = await lockBuild(path.join(root, 'dist', '.build-lock'));
  try {
    if (await isBuildCurrent()) return await buildConsoleIfStale(options);
    await build(options);
    return true;
  } finally {
    await release();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  build().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
