import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { createRecordingLogger, runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));

describe('Flow/Log', () => {
  it('writes the message at the level and echoes it', async () => {
    const logger = createRecordingLogger();
    const output = await runPluginFolder(folder, {
      logger,
      parameters: { message: 'Fetched 3 rows', level: 'Warning', data: { region: 'eu' } },
    });
    expect(output).toEqual({ level: 'Warning', message: 'Fetched 3 rows {"region":"eu"}' });
    expect(logger.entries).toEqual([
      { level: 'Warning', message: 'Fetched 3 rows {"region":"eu"}' },
    ]);
  });

  it('logs at Info by default', async () => {
    const logger = createRecordingLogger();
    await runPluginFolder(folder, { logger, parameters: { message: 'hello' } });
    expect(logger.entries).toEqual([{ level: 'Info', message: 'hello' }]);
  });

  it('rejects an unknown level, naming the parameter', async () => {
    const run = runPluginFolder(folder, { parameters: { message: 'x', level: 'Loud' } });
    await expect(run).rejects.toThrow(PluginInputError);
    await expect(run).rejects.toThrow(/parameter "level" must be one of/);
  });
});
