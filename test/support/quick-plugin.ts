/**
 * `Test/QuickWait`, a plugin whose manifest says it is quick, in a registry of its own: it waits
 * as long as a task asks (so a test can cancel it, time it out or kill its worker mid-run) and
 * fails on purpose for the first attempts a task names. The built-in quick plugins finish before
 * a test could do any of that.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildRegistry } from '#plugin-host/registry.js';
import { writeTestPackage } from './plugin-packages.js';
import type { TrellisClient } from '../../sdk/src/index.js';

export const quickWait = { type: 'Test/QuickWait', version: '1.0.0' } as const;

const source = `import { writeFileSync } from 'node:fs';

export async function execute(parameters, context) {
  context.heartbeat();
  const { attempt } = context.task;
  if (attempt <= (parameters.failUntilAttempt ?? 0)) {
    throw new Error('attempt ' + attempt + ' fails on purpose');
  }
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, parameters.milliseconds ?? 0);
    context.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      if (parameters.abortedMarker) writeFileSync(parameters.abortedMarker, 'aborted');
      reject(context.signal.reason);
    }, { once: true });
  });
  return { attempt };
}
`;

/** Writes a registry holding `Test/QuickWait`: its index (for `Plugins.Registry`), and cleanup. */
export async function writeQuickPluginRegistry(): Promise<{
  index: string;
  remove(): Promise<void>;
}> {
  const root = await mkdtemp(path.join(tmpdir(), 'trellis-quick-registry-'));
  const folder = await writeTestPackage(
    {
      ...quickWait,
      quick: true,
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          milliseconds: { type: 'integer', minimum: 0 },
          failUntilAttempt: { type: 'integer', minimum: 0 },
          abortedMarker: { type: 'string' },
        },
      },
    },
    source,
    path.join(root, 'sources'),
  );
  const index = path.join(root, 'index');
  await buildRegistry(index, [folder]);
  return { index, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Installs `Test/QuickWait` from the configured registry. */
export async function installQuickWait(client: TrellisClient): Promise<void> {
  await client.POST('/plugins', { body: { Type: quickWait.type, Version: quickWait.version } });
}

/** A task type running `Test/QuickWait`. */
export const quickWaitTask = (parameters: Record<string, unknown>) => ({
  type: { plugin: quickWait.type },
  parameters,
});
