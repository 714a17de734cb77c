import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPluginFolder, PluginInputError, PluginRuntimeError } from './runner.js';
import { encryptSecrets, SecretKeys } from './settings.js';
import { writeTestPackage } from '../../../test/support/plugin-packages.js';
import { createRecordingLogger, runPluginFolder } from '../../../test/support/plugin-folder.js';

const probe = await writeTestPackage(
  {
    type: 'Test/Probe',
    version: '2.0.0',
    specifications: [
      {
        key: 'greeting',
        type: 'string',
        required: false,
        secret: false,
        description: '',
        default: 'hello',
      },
      { key: 'token', type: 'string', required: false, secret: true, description: '' },
      { key: 'level', type: 'integer', required: true, secret: false, description: 'How loud' },
    ],
    parameters: {
      type: 'object',
      required: ['mode'],
      additionalProperties: false,
      properties: {
        mode: {
          enum: [
            'echo',
            'big',
            'bigint',
            'undefined',
            'fail',
            'fatal',
            'log',
            'leak',
            'leak-fail',
            'leak-throw',
            'host',
            'mutate',
            'pid',
          ],
        },
        size: { type: 'integer', default: 10 },
      },
    },
  },
  `export async function execute(parameters, context) {
  switch (parameters.mode) {
    case 'echo': return { parameters, specifications: context.specifications, task: context.task, when: new Date(0) };
    case 'big': return { data: 'x'.repeat(parameters.size) };
    case 'bigint': return { n: 1n };
    case 'undefined': return undefined;
    case 'fail': throw new Error('remote said no');
    case 'fatal': throw Object.assign(new Error('cannot ever work'), { nonRetryable: true });
    case 'leak-throw': throw new Error('the server refused ' + context.specifications.token);
    case 'pid': return { pid: process.pid };
    case 'log': context.logger.warning('using token ' + context.specifications.token); context.logger.error('failed', 'stack with ' + context.specifications.token); return {};
    case 'leak': return { header: 'Bearer ' + context.specifications.token, nested: [{ ['k-' + context.specifications.token]: 1 }], n: 5 };
    case 'leak-fail': throw Object.assign(new Error('server answered 401 for token ' + context.specifications.token), { nonRetryable: true });
    case 'host': return context.host;
    case 'mutate': context.host.storageRoot = '/'; return context.host;
  }
}
`,
);

// A real folder: the sandbox a third-party plugin runs in lets it write there, so it must exist.
const storageRoot = path.join(os.tmpdir(), 'trellis-runner-test-storage');

const run = (
  parameters: Record<string, unknown>,
  specifications: Record<string, unknown> = { level: 1 },
) => runPluginFolder(probe, { parameters, specifications, host: { storageRoot } });

describe('executePlugin', () => {
  it('merges setting defaults, fills parameter defaults and returns plain JSON', async () => {
    expect(await run({ mode: 'echo' })).toEqual({
      parameters: { mode: 'echo', size: 10 },
      specifications: { greeting: 'hello', level: 1 },
      task: { name: 'test', executionId: 'test', attempt: 1, idempotencyKey: 'test:test:1' },
      when: '1970-01-01T00:00:00.000Z',
    });
    expect(await run({ mode: 'echo' }, { level: 2, greeting: 'hi', token: null })).toMatchObject({
      specifications: { greeting: 'hi', level: 2 },
    });
  });

  it('rejects bad parameters and settings as input errors naming them', async () => {
    await expect(run({})).rejects.toThrow(
      new PluginInputError('Plugin "Test/Probe" 2.0.0: parameter "mode" is required'),
    );
    await expect(run({ mode: 'echo', size: 'big', extra: 1 })).rejects.toThrow(
      new PluginInputError(
        'Plugin "Test/Probe" 2.0.0: parameter "extra" is not allowed; parameter "size" must be integer',
      ),
    );
    await expect(run({ mode: 'echo' }, {})).rejects.toThrow(
      new PluginInputError(
        'Plugin "Test/Probe" 2.0.0: specification "level" is required (integer: How loud)',
      ),
    );
  });

  it('tells runtime failures from failures retrying cannot fix', async () => {
    const failing = run({ mode: 'fail' });
    await expect(failing).rejects.toThrow(PluginRuntimeError);
    await expect(failing).rejects.toThrow('remote said no');
    await expect(failing).rejects.toMatchObject({ nonRetryable: false });
    const fatal = run({ mode: 'fatal' });
    await expect(fatal).rejects.toThrow(PluginInputError);
    await expect(fatal).rejects.toMatchObject({ nonRetryable: true, message: 'cannot ever work' });
  });

  it('checks the output is JSON within the size limit', async () => {
    expect(await run({ mode: 'undefined' })).toBeNull();
    await expect(run({ mode: 'bigint' })).rejects.toThrow(
      /returned an output that is not JSON-serialisable/,
    );
    const limited = runPluginFolder(probe, {
      parameters: { mode: 'big', size: 3 * 1024 * 1024 },
      specifications: { level: 1 },
    });
    await expect(limited).rejects.toThrow(
      new PluginInputError(
        'Plugin "Test/Probe" 2.0.0 returned 3.0 MiB of output, over the 2.0 MiB limit (Plugins.MaxOutputBytes); return less, e.g. write large data to storage and return its path',
      ),
    );
  });

  it('decrypts secret settings and keeps them out of the task log', async () => {
    const key = SecretKeys.fromText('runner-test-key');
    const logger = createRecordingLogger();
    const specifications = encryptSecrets(
      [{ key: 'token', type: 'string', required: false, secret: true, description: '' }],
      { token: 'tok-123', level: 1 },
      key,
    );
    await runPluginFolder(probe, {
      parameters: { mode: 'log' },
      specifications,
      logger,
      encryptionKey: key,
    });
    expect(logger.entries).toEqual([
      { level: 'Warning', message: 'using token ********' },
      { level: 'Error', message: 'failed', exception: 'stack with ********' },
    ]);
  });

  it('keeps secret setting values out of the output and the error, as out of the log', async () => {
    const specifications = { level: 1, token: 'tok-123' };
    expect(await run({ mode: 'leak' }, specifications)).toEqual({
      header: 'Bearer ********',
      nested: [{ 'k-********': 1 }],
      n: 5,
    });
    const failure = await run({ mode: 'leak-fail' }, specifications).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PluginInputError);
    expect((failure as Error).message).toBe('server answered 401 for token ********');
    const cause = (failure as Error).cause as Error;
    expect(`${cause.message} ${cause.stack}`).not.toContain('tok-123');
    // Not a secret: left as it is.
    expect(await run({ mode: 'leak' }, { level: 1 })).toMatchObject({ header: 'Bearer undefined' });
  });

  it('gives host settings the task cannot override, even from inside the plugin', async () => {
    expect(await run({ mode: 'host' })).toEqual({
      storageRoot,
      allowProcessExecution: false,
      network: {
        denyCidrs: [],
        trellisEndpoints: [],
        allowCidrs: [],
        defaultDenyCidrs: expect.arrayContaining(['127.0.0.0/8', '169.254.0.0/16', '::1/128']),
      },
      trellisDatabase: null,
    });
    await expect(run({ mode: 'mutate' })).rejects.toThrow(PluginRuntimeError);
  });

  it("shows a plugin's error with its own frames only, secrets redacted", async () => {
    const failing = run({ mode: 'leak-throw' }, { level: 1, token: 'tok-456' });
    await expect(failing).rejects.toThrow(new PluginRuntimeError('the server refused ********'));
    const { exception } = (await failing.catch((error: unknown) => error)) as PluginRuntimeError;
    expect(exception).toMatch(
      /^Error: the server refused \*{8}\n {4}at (Module\.)?execute \(index\.js:\d+:\d+\)$/,
    );
  });

  it('runs a package not shipped in plugins/ in a sandbox, even when it asks to run in process', async () => {
    const greedy = await writeTestPackage(
      { type: 'Test/Greedy', version: '1.0.0', inProcess: true },
      'export const execute = () => ({ pid: process.pid });\n',
    );
    expect((await loadPluginFolder(greedy, 'third-party')).runs).toBe('third-party');
    expect((await loadPluginFolder(greedy, 'builtin')).runs).toBe('in-process');
    const { pid } = (await runPluginFolder(greedy)) as { pid: number };
    expect(pid).not.toBe(process.pid);
  });

  it('rejects with the cancel reason when canceled before the start', async () => {
    const reason = new Error('canceled');
    await expect(
      runPluginFolder(probe, {
        parameters: { mode: 'echo' },
        specifications: { level: 1 },
        signal: AbortSignal.abort(reason),
      }),
    ).rejects.toBe(reason);
  });
});
