// Builds the web console (console/, served at /ui) into static files: console/dist/index.html and
// content-hashed assets under console/dist/assets/, which the API serves with immutable caching.
// esbuild bundles the TypeScript (Preact, the SDK from its source, as inside the repository
// everywhere) for browsers; nothing is fetched at run time from anywhere but the API itself.
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockBuild } from './build-lock.mjs';
import { stampOf } from './build-state.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const consoleRoot = path.join(root, 'console');
/** What the server serves (`consoleDirectory` in server/src/system/console.ts). */
export const consoleDist = path.join(consoleRoot, 'dist');
const stampFile = path.join(consoleDist, '.build-stamp');
/**
 * What the console's build reads: its sources, the definition room's it imports, the SDK's, itself
 * (the generated types are erased).
 */
const inputs = [
  'console/src',
  'core/src/definition',
  'console/package.json',
  'console/tsconfig.json',
  'sdk/src',
  'scripts/build/build-console.mjs',
];
/** The URL path the API serves the assets under. */
const assetsPath = '/ui/assets/';

/** @param {{ say?: (line: string) => void }} options where the progress lines go */
export async function buildConsole({ say = (line) => console.log(line) } = {}) {
  const release = await lockBuild(path.join(consoleRoot, '.build-lock'));
  try {
    await buildUnlocked(say);
  } finally {
    await release();
  }
}

/** Builds the console unless console/dist is a build of its current sources. */
export async function buildConsoleIfStale(options = {}) {
  if (await isConsoleBuildCurrent()) return false;
  const release = await lockBuild(path.join(consoleRoot, '.build-lock'));
  try {
    if (await isConsoleBuildCurrent()) return false;
    await buildUnlocked(options.say ?? ((line) => console.log(line)));
    return true;
  } finally {
    await release();
  }
}

/** True when console/dist was built from the console's sources as they are now. */
export async function isConsoleBuildCurrent() {
  const recorded = await readFile(stampFile, 'utf8').catch(() => null);
  return recorded !== null && recorded === (await stampOf(inputs));
}

async function buildUnlocked(say) {
  const started = Date.now();
  say('build: bundling the console into console/dist');
  // Read before building: a source saved during the build makes the next check stale.
  const stamp = await stampOf(inputs);
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new Error(
      'Cannot build the console: esbuild is not installed (npm install, with dev dependencies).',
    );
  }
  // A fresh folder swapped in whole, so the server never serves half a build.
  const staging = await mkdtemp(path.join(consoleRoot, '.dist-'));
  try {
    // mkdtemp makes it private; the server may run as another user (the container image).
    await chmod(staging, 0o755);
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { main: 'console/src/main.tsx' },
      tsconfig: 'console/tsconfig.json',
      bundle: true,
      format: 'esm',
      // Pages that import a large library on demand (the editor's CodeMirror) get chunks of their own.
      splitting: true,
      platform: 'browser',
      target: ['es2022', 'chrome111', 'firefox115', 'safari16'],
      minify: true,
      sourcemap: 'linked',
      entryNames: '[name]-[hash]',
      assetNames: '[name]-[hash]',
      outdir: path.join(staging, 'assets'),
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = Object.entries(result.metafile.outputs);
    const [script, main] =
      outputs.find(([, output]) => output.entryPoint === 'console/src/main.tsx') ?? [];
    if (!script || !main?.cssBundle) throw new Error('build: esbuild wrote no console bundle');
    const favicon = await hashedCopy(path.join(consoleRoot, 'src', 'favicon.svg'), staging);
    const template = await readFile(path.join(consoleRoot, 'src', 'index.html'), 'utf8');
    const page = template
      .replace('%SCRIPT%', assetsPath + path.basename(script))
      .replace('%STYLES%', assetsPath + path.basename(main.cssBundle))
      .replace('%FAVICON%', assetsPath + favicon);
    if (page.includes('%')) throw new Error('build: console/src/index.html has a placeholder left');
    await writeFile(path.join(staging, 'index.html'), page);
    await writeFile(path.join(staging, '.build-stamp'), stamp);
    const previous = `${consoleDist}.previous`;
    await rm(previous, { recursive: true, force: true });
    await rename(consoleDist, previous).catch((error) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(staging, consoleDist);
    await rm(previous, { recursive: true, force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  say(`build: console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Copies a file into `<folder>/assets/` under a name with its content hash; returns that name. */
async function hashedCopy(file, folder) {
  const bytes = await readFile(file);
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 10);
  const { name, ext } = path.parse(file);
  const copy = `${name}-${hash}${ext}`;
  await writeFile(path.join(folder, 'assets', copy), bytes);
  return copy;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildConsole().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
