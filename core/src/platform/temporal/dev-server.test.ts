import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logging.js';
import { devServerDynamicConfig, startDevServer } from './dev-server.js';

// Fake CLIs only: the real server is exercised by the integration tests.
const logger = createLogger({ Level: 'silent' });
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-dev-server-'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

async function fakeCli(name: string, body: string): Promise<string> {
  const file = path.join(folder, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

describe('startDevServer', () => {
  it('reports the exit code and the end of the output of a server that dies during start', async () => {
    const cliPath = await fakeCli(
      'crashing',
      'echo "listen tcp 127.0.0.1: bind: address already in use" >&2; exit 3',
    );
    await expect(
      startDevServer({ cliPath, namespace: 'default', logger, headless: true }),
    ).rejects.toThrow(/exited with code 3 during start[\s\S]*address already in use/);
  });

  it('gives up after the start timeout, says where it waited, and stops the process', async () => {
    const marker = path.join(folder, 'still-running');
    const cliPath = await fakeCli(
      'silent',
      `echo "starting" >&2; trap 'exit 0' TERM; while :; do touch ${marker}; sleep 0.1; done`,
    );
    const error = await startDevServer({
      cliPath,
      port: 1,
      namespace: 'default',
      logger,
      headless: true,
      startTimeoutMs: 1_500,
    }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /did not answer on 127\.0\.0\.1:1 within 1500 ms[\s\S]*starting/,
    );

    // Stopped: the loop no longer touches its marker.
    await rm(marker, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expect(import('node:fs/promises').then((fs) => fs.stat(marker))).rejects.toThrow();
  });

  it('raises how often the server reads its task queues (each run would wait its turn)', async () => {
    const argsFile = path.join(folder, 'args');
    const cliPath = await fakeCli('recording', `printf '%s\\n' "$@" > ${argsFile}; exit 3`);
    await startDevServer({ cliPath, namespace: 'default', logger, headless: true }).catch(
      () => undefined,
    );
    const args = (await readFile(argsFile, 'utf8')).trim().split('\n');
    const given = args.flatMap((arg, index) =>
      args[index - 1] === '--dynamic-config-value' ? [arg] : [],
    );
    expect(given).toEqual(
      Object.entries(devServerDynamicConfig).map(([key, value]) => `${key}=${value}`),
    );
    expect(devServerDynamicConfig['history.transferProcessorMaxPollRPS']).toBeGreaterThan(20);
  });
});
