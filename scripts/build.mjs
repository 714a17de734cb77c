// `npm run build`: compiles Trellis to dist/ (tsconfig.build.json) and prebuilds the workflow
// bundle beside the compiled worker, so production runs plain JavaScript and a worker start needs
// no webpack run. Plain JavaScript itself: building must not need a TypeScript loader.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildStamp, isBuildCurrent, writeBuildStamp } from './build-state.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

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

  say('build: bundling the workflow code (plain, and traced for Telemetry.OtlpEndpoint)');
  const worker = await import('../dist/workflows-worker/src/worker.js');
  const { createLogger } = await import('../dist/core/src/logging.js');
  const logger = createLogger({ Level: 'warn' });
  const bundle = await worker.buildWorkflowBundle(logger);
  await writeFile(worker.prebuiltBundlePath, bundle.code);
  const traced = await worker.buildWorkflowBundle(logger, { traced: true });
  await writeFile(worker.prebuiltTracedBundlePath, traced.code);
  await writeBuildStamp(await buildStamp());
  say(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Builds unless dist/ is already a build of the current sources. Safe to call from several
 * processes at once (two test files, two `npm start`s): one builds while the others wait, then
 * find dist/ current, rather than two compilers writing the same files.
 */
export async function buildIfStale(options) {
  if (await isBuildCurrent()) return false;
  const release = await lockBuild();
  try {
    if (await isBuildCurrent()) return false;
    await build(options);
    return true;
  } finally {
    await release();
  }
}

const lockFolder = path.join(root, 'dist', '.build-lock');
/** A build takes a minute or two; a lock older than this was left by a process that died. */
const abandonedLockMs = 10 * 60 * 1000;

async function lockBuild() {
  await mkdir(path.dirname(lockFolder), { recursive: true });
  for (;;) {
    try {
      await mkdir(lockFolder);
      await writeFile(path.join(lockFolder, 'pid'), String(process.pid));
      return () => rm(lockFolder, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (await isAbandoned()) {
      await rm(lockFolder, { recursive: true, force: true });
      continue;
    }
    await sleep(250);
  }
}

async function isAbandoned() {
  const info = await stat(lockFolder).catch(() => null);
  if (!info) return false;
  if (Date.now() - info.mtimeMs > abandonedLockMs) return true;
  const pid = Number(await readFile(path.join(lockFolder, 'pid'), 'utf8').catch(() => ''));
  if (!pid) return false; // just created: its holder writes the pid next
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  build().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
