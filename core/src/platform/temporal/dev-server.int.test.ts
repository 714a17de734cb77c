import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../logging.js';
import { findTemporalCli } from './cli.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-orphan-'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

const accepts = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = address.split(':');
    const socket = connect(Number(port), host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

it('takes the dev server down with it when its parent is killed with SIGKILL', async () => {
  const cli = await findTemporalCli({
    logger: createLogger({ Level: 'silent' }),
    env: process.env,
  });
  const script = path.join(folder, 'parent.mts');
  const devServerModule = new URL('./dev-server.ts', import.meta.url).href;
  const loggingModule = new URL('../logging.ts', import.meta.url).href;
  await writeFile(
    script,
    [
      `import { startDevServer } from ${JSON.stringify(devServerModule)};`,
      `import { createLogger } from ${JSON.stringify(loggingModule)};`,
      `const server = await startDevServer({ cliPath: process.argv[2], namespace: 'default', headless: true, logger: createLogger({ Level: 'silent' }) });`,
      `console.log('ADDRESS ' + server.address);`,
      `setInterval(() => {}, 1000);`,
    ].join('\n'),
  );
  // One node process (no tsx wrapper), so SIGKILL hits the very process that owns the server.
  const parent = spawn(process.execPath, ['--import', 'tsx', script, cli.path], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const address = await new Promise<string>((resolve, reject) => {
    let output = '';
    parent.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ADDRESS (\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    parent.on('exit', () => reject(new Error(`parent exited early: ${output}`)));
  });
  expect(await accepts(address)).toBe(true);

  // As an OOM killer or `kill -9` would: no exit handlers run.
  const exited = new Promise((resolve) => parent.on('exit', resolve));
  process.kill(parent.pid!, 'SIGKILL');
  await exited;
  const deadline = Date.now() + 15_000;
  while ((await accepts(address)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await accepts(address)).toBe(false);
});
