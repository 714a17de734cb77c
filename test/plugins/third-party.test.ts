import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRegistry } from '#plugin-host/registry.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { definition, run, taskLogs, tasksOf } from '../support/engine-support.js';

let trellis: Trellis;
let registry: string;

/** A plugin as a third party would write it: a manifest and an ES module, nothing of Trellis. */
async function writeGreeter(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(
    path.join(folder, 'plugin.json'),
    JSON.stringify({
      type: 'Acme/Greeter',
      version: '2.1.0',
      description: 'Greets someone, signing with a secret token.',
      specifications: [
        {
          key: 'greeting',
          type: 'string',
          required: false,
          secret: false,
          description: 'Word',
          default: 'Hello',
        },
        { key: 'token', type: 'string', required: true, secret: true, description: 'Signature' },
      ],
      parameters: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' } },
        additionalProperties: false,
      },
    }),
  );
  await writeFile(
    path.join(folder, 'index.js'),
    `export async function execute(parameters, context) {
  const text = context.specifications.greeting + ', ' + parameters.name + '!';
  context.logger.info('Greeting ' + parameters.name + ' with token ' + context.specifications.token);
  return { text, signedWith: context.specifications.token.length, attempt: context.task.attempt };
}
`,
  );
}

beforeAll(async () => {
  registry = await mkdtemp(path.join(tmpdir(), 'trellis-engine-registry-'));
  await writeGreeter(path.join(registry, 'sources', 'greeter'));
  await buildRegistry(path.join(registry, 'index'), [path.join(registry, 'sources', 'greeter')]);
  trellis = await startTrellis({
    worker: true,
    config: { Plugins: { Registry: path.join(registry, 'index') } },
  });
});
afterAll(async () => {
  await trellis?.stop();
  if (registry) await rm(registry, { recursive: true, force: true });
});

describe('a third-party plugin', () => {
  it('installed from a registry, configured with a secret, runs as a task and feeds the next', async () => {
    await trellis.admin.POST('/plugins', { body: { Type: 'Acme/Greeter', Version: '2.1.0' } });
    await trellis.admin.POST('/config', {
      body: {
        name: 'greeter-prod',
        type: 'Acme/Greeter',
        version: '2.1.0',
        specifications: { greeting: 'Welcome', token: 's3cr3t-token' },
      },
    });
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          { name: 'Greet', type: 'greeter-prod', parameters: { name: "$[Variables('who')]" } },
          {
            name: 'Echo',
            type: { plugin: 'Flow/Log' },
            dependencies: ['Greet'],
            parameters: {
              message: "$[Outputs('Greet').text] ($[Outputs('Greet').signedWith] chars)",
            },
          },
        ],
        { variables: { who: 'Ada' } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    const greetLogs = await taskLogs(trellis.admin, workflowId, executionId, tasks.Greet!.id);
    // The plugin's own log line, with the decrypted secret redacted.
    expect(greetLogs).toContain('Greeting Ada with token ********');
    expect(greetLogs.join('\n')).not.toContain('s3cr3t-token');
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Echo!.id)).toContain(
      'Welcome, Ada! (12 chars)',
    );
  });

  it('fails the task with the runner message when a required setting is missing', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Bare',
          type: { plugin: 'Acme/Greeter', version: '2.1.0' },
          parameters: { name: 'x' },
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const task = (await tasksOf(trellis.admin, workflowId, executionId)).Bare!;
    expect(task.status).toBe('Failed');
    expect(task.message).toMatch(/^Failed: Plugin "Acme\/Greeter" 2\.1\.0: .*token/);
  });
});
