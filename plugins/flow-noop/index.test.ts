import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));

describe('Flow/NoOp', () => {
  it('returns its parameters unchanged', async () => {
    expect(await runPluginFolder(folder, { parameters: { a: 1, b: ['x'] } })).toEqual({
      a: 1,
      b: ['x'],
    });
    expect(await runPluginFolder(folder)).toEqual({});
  });
});
