import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));

describe('Flow/Delay', () => {
  it('waits for the given duration', async () => {
    const started = performance.now();
    const output = await runPluginFolder(folder, { parameters: { milliseconds: 120 } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    expect(output).toEqual({ delayedMilliseconds: 120 });
  });

  it('stops at once when canceled, rejecting with the cancel reason', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const run = runPluginFolder(folder, {
      parameters: { milliseconds: 60_000 },
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('canceled by user')), 50);
    await expect(run).rejects.toThrow('canceled by user');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('does not start when already canceled', async () => {
    const run = runPluginFolder(folder, {
      parameters: { milliseconds: 60_000 },
      signal: AbortSignal.abort(new Error('too late')),
    });
    await expect(run).rejects.toThrow('too late');
  });

  it('requires a non-negative duration', async () => {
    await expect(runPluginFolder(folder, { parameters: {} })).rejects.toThrow(
      new PluginInputError('Plugin "Flow/Delay" 1.0.0: parameter "milliseconds" is required'),
    );
    await expect(runPluginFolder(folder, { parameters: { milliseconds: -1 } })).rejects.toThrow(
      /parameter "milliseconds" must be >= 0/,
    );
  });
});
