/**
 * The CLI end to end as it is published: sdk/ and cli/ packed, both tarballs installed into a
 * scratch project outside the repository, and the installed `trellis` bin (compiled JavaScript,
 * the packed SDK) run against a real Trellis. Nothing here loads cli/src or sdk/src.
 */
import { lstat, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { packCli, type PackedCli } from '../support/packed-cli.js';

let packed: PackedCli;
let trellis: Trellis;

beforeAll(async () => {
  // Packing (two clean builds) and installing take a while on a busy machine.
  [packed, trellis] = await Promise.all([packCli(), startTrellis({ worker: true })]);
}, 300_000);
afterAll(async () => {
  await trellis?.stop();
  await packed?.remove();
});

const installed = (name: string) => path.join(packed.consumer, 'node_modules', '@trellis', name);

async function filesOf(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)));
}

describe('the packed CLI', () => {
  it('installs a trellis bin with its build, README and manifest only, on the packed SDK', async () => {
    const files = await filesOf(installed('cli'));
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'dist/main.js', 'dist/program.js']),
    );
    expect(files.filter((file) => !/^(package\.json|README\.md|dist\/.+\.js)$/.test(file))).toEqual(
      [],
    );
    expect(files.filter((file) => file.includes('.test.'))).toEqual([]);
    // The bin is the compiled entry point; the SDK a real install, not a link into the repository.
    expect(await realpath(packed.bin)).toBe(path.join(installed('cli'), 'dist', 'main.js'));
    expect((await lstat(installed('sdk'))).isSymbolicLink()).toBe(false);
    expect(await filesOf(installed('sdk'))).toContain('dist/index.js');
  });

  it('runs: --version, --help, and a workflow added and followed to its end', async () => {
    const command: [string] = [packed.bin];
    const env = {
      TRELLIS_URL: trellis.baseUrl,
      TRELLIS_USER: users.workflow.username,
      TRELLIS_PASSWORD: users.workflow.password,
    };
    const { version } = JSON.parse(
      await readFile(path.join(installed('cli'), 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    expect((await runCli(['--version'], { command })).stdout).toBe(`${version}\n`);
    expect((await runCli(['--help'], { command })).stdout).toContain('Usage: trellis');

    const name = `packed-cli-${Date.now().toString(36)}`;
    const file = path.join(packed.consumer, 'hello.json');
    const definition = {
      name,
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }],
    };
    await writeFile(file, JSON.stringify(definition));
    const add = await runCli(['workflows', 'add', '-f', file], { command, env });
    expect(add.code, add.stderr).toBe(0);

    const run = await runCli(['run', name, '--follow'], { command, env });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^\[1\/1\] Say Completed/m);
    expect(run.stdout).toContain('Execution Completed');

    const refused = await runCli(['workflows', 'list'], {
      command,
      env: { ...env, TRELLIS_PASSWORD: 'wrong' },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Invalid username or password. (HTTP 401)');
  });

  it('serves MCP on stdio with the installed MCP SDK: an initialize answered, then the end of stdin ends it', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'packed-test', version: '1.0.0' },
      },
    };
    const served = await runCli(['mcp'], {
      command: [packed.bin],
      env: { TRELLIS_URL: trellis.baseUrl, TRELLIS_TOKEN: 'unused' },
      input: `${JSON.stringify(initialize)}\n`,
    });
    expect(served.code, served.stderr).toBe(0);
    expect(JSON.parse(served.stdout)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'trellis' }, capabilities: { tools: {} } },
    });
  });
});
