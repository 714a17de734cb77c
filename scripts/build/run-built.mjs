// Runs a compiled Trellis program from dist/, building first when dist/ (or the console's build,
// console/dist) is missing or older than the sources, so a fresh clone starts with
// `npm install && npm start`:
//
//   node scripts/build/run-built.mjs bin/trellis.js [args]        (npm start -- --role api)
//   node scripts/build/run-built.mjs scripts/dev/hash-password.js      (npm run hash-password)
//
// The program sees only its own arguments. Nothing here loads a TypeScript loader.
import { existsSync } from 'node:fs';
import { buildIfStale } from './build.mjs';
import { isConsoleBuildCurrent } from './build-console.mjs';
import { isBuildCurrent } from './build-state.mjs';

const [program] = process.argv.splice(2, 1);
if (!program) {
  console.error('usage: node scripts/build/run-built.mjs <program under dist/> [args]');
  process.exit(2);
}
const target = new URL(`../../dist/${program}`, import.meta.url);
if (!(await isBuildCurrent()) || !(await isConsoleBuildCurrent())) {
  const canBuild = existsSync(new URL('../../node_modules/typescript', import.meta.url));
  // A production install (no dev dependencies) runs what it was shipped with.
  if (canBuild || !existsSync(target)) {
    console.error('Building Trellis (npm run build): first start, or the sources changed...');
    try {
      await buildIfStale({ say: (line) => console.error(line) });
    } catch (error) {
      console.error(`trellis: ${error.message}`);
      process.exit(1);
    }
  }
}
await import(target.href);
