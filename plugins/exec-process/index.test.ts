import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PluginInputError, PluginRuntimeError } from '#plugin-host/runner.js';
import { runPluginFolder, type FolderRunOptions } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
const node = process.execPath;
let cwd: string;
const run = (parameters: Record<string, unknown>, options: FolderRunOptions = {}) =>
  runPluginFolder(folder, { parameters, host: { allowProcessExecution: true }, ...options });

beforeAll(async () => {
  cwd = await realpath(await mkdtemp(path.join(os.tmpdir(), 'trellis-exec-')));
});
afterAll(() => rm(cwd, { recursive: true, force: true }));

describe('Exec/Process', () => {
  it('is refused unless the installation allows process execution', async () => {
    const attempt = runPluginFolder(folder, { parameters: { command: node, args: ['-v'] } });
    await expect(attempt).rejects.toThrow(PluginInputError);
    await expect(attempt).rejects.toThrow(/set Plugins.AllowProcessExecution to true/);
  });

  it('runs a program with arguments (no shell), env, cwd and stdin', async () => {
    const script =
      'let input="";process.stdin.on("data",d=>input+=d).on("end",()=>{' +
      'console.log(JSON.stringify({args:process.argv.slice(1),greeting:process.env.GREETING,cwd:process.cwd(),input}));' +
      'console.error("to stderr")})';
    const output = (await run({
      command: node,
      args: ['-e', script, '$HOME', 'a b;c'],
      env: { GREETING: 'hi' },
      cwd,
      input: 'from stdin',
    })) as { exitCode: number; stdout: string; stderr: string; timedOut: boolean };
    expect(output.exitCode).toBe(0);
    expect(output.timedOut).toBe(false);
    expect(JSON.parse(output.stdout)).toEqual({
      args: ['$HOME', 'a b;c'],
      greeting: 'hi',
      cwd,
      input: 'from stdin',
    });
    expect(output.stderr).toBe('to stderr\n');
  });

  it('fails on a non-zero exit unless told not to', async () => {
    const failing = { command: node, args: ['-e', 'console.error("boom"); process.exit(3)'] };
    const attempt = run(failing);
    await expect(attempt).rejects.toThrow(PluginRuntimeError);
    await expect(attempt).rejects.toThrow(/exited with 3: boom/);
    expect(await run({ ...failing, failOnNonZeroExit: false })).toMatchObject({
      exitCode: 3,
      stderr: 'boom\n',
    });
  });

  it('kills the program when it times out', async () => {
    const started = performance.now();
    await expect(
      run({ command: node, args: ['-e', 'setTimeout(() => {}, 60000)'], timeoutMilliseconds: 300 }),
    ).rejects.toThrow(/timed out after 300 ms/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('kills the program when the task is canceled', async () => {
    const controller = new AbortController();
    const attempt = run(
      { command: node, args: ['-e', 'setTimeout(() => {}, 60000)'] },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('canceled by user')), 200);
    await expect(attempt).rejects.toThrow('canceled by user');
  });

  it('reports an unknown program as an input error', async () => {
    await expect(run({ command: 'trellis-no-such-program' })).rejects.toThrow(
      new PluginInputError('command "trellis-no-such-program" was not found'),
    );
  });

  it('does not take the permission from the task', async () => {
    await expect(
      runPluginFolder(folder, { parameters: { command: node, allowProcessExecution: true } }),
    ).rejects.toThrow(/parameter "allowProcessExecution" is not allowed/);
  });
});
