import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
const run = (parameters: Record<string, unknown>) => runPluginFolder(folder, { parameters });

describe('Data/Base64', () => {
  it('encodes and decodes text, standard and URL-safe', async () => {
    expect(await run({ operation: 'encode', input: 'héllo?>' })).toEqual({
      result: 'aMOpbGxvPz4=',
    });
    expect(await run({ operation: 'decode', input: 'aMOpbGxvPz4=' })).toEqual({
      result: 'héllo?>',
    });
    expect(await run({ operation: 'encode', input: 'héllo?>', urlSafe: true })).toEqual({
      result: 'aMOpbGxvPz4',
    });
    expect(await run({ operation: 'decode', input: 'aMOpbGxvPz4', urlSafe: true })).toEqual({
      result: 'héllo?>',
    });
  });

  it('refuses input that is not Base64', async () => {
    await expect(run({ operation: 'decode', input: 'not base64!' })).rejects.toThrow(
      new PluginInputError('input is not valid Base64'),
    );
  });

  it('refuses an unknown operation', async () => {
    await expect(run({ operation: 'rot13', input: 'x' })).rejects.toThrow(
      /parameter "operation" must be one of "encode", "decode"/,
    );
  });
});
