// `npm install`'s last step in a checkout (the `prepare` script): builds the SDK and the CLI and
// links the `trellis` command (npm links a package's bins before this step, and skips one whose
// file is not built yet), so `npx trellis` works at once, without a separate build. An install
// without the development dependencies (a production image) has no compiler: nothing to build;
// nor has an install before the sources are copied in (the image's first step), which skips this.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('../..', import.meta.url);

function npm(...args) {
  const done = spawnSync('npm', args, { stdio: 'inherit', cwd: root });
  if (done.status !== 0) {
    console.error(`prepare: npm ${args.join(' ')} failed (above); \`npm run build\` retries.`);
    process.exit(done.status ?? 1);
  }
}

if (existsSync(new URL('node_modules/typescript', root))) {
  npm('run', 'build', '--silent', '-w', 'sdk', '-w', 'cli');
  npm('rebuild', '--ignore-scripts', '@trellis/cli');
}
