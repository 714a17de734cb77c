import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
const run = (parameters: Record<string, unknown>) => runPluginFolder(folder, { parameters });

describe('Data/Csv', () => {
  it('parses CSV with a header into objects, handling quotes', async () => {
    const text = 'name,city\n"Smith, Ann",Paris\nBob,"Says ""hi"""\n\n';
    expect(await run({ operation: 'parse', text })).toEqual({
      rows: [
        { name: 'Smith, Ann', city: 'Paris' },
        { name: 'Bob', city: 'Says "hi"' },
      ],
      count: 2,
    });
  });

  it('parses without a header into arrays, with another delimiter', async () => {
    expect(
      await run({ operation: 'parse', text: 'a;b\nc;d', header: false, delimiter: ';' }),
    ).toEqual({
      rows: [
        ['a', 'b'],
        ['c', 'd'],
      ],
      count: 2,
    });
  });

  it('writes rows as CSV and reads them back unchanged', async () => {
    const rows = [
      { name: 'Smith, Ann', city: 'Paris' },
      { name: 'Bob', city: 'Says "hi"' },
    ];
    const written = (await run({ operation: 'stringify', rows })) as { text: string };
    expect(written.text).toBe('name,city\n"Smith, Ann",Paris\nBob,"Says ""hi"""\n');
    expect(await run({ operation: 'parse', text: written.text })).toEqual({ rows, count: 2 });
  });

  it('writes array rows with chosen columns', async () => {
    expect(await run({ operation: 'stringify', rows: [[1, 2]], columns: ['x', 'y'] })).toEqual({
      text: 'x,y\n1,2\n',
      count: 1,
    });
  });

  it('reports malformed CSV and missing input as input errors', async () => {
    await expect(run({ operation: 'parse', text: 'a,b\n"open,2' })).rejects.toThrow(
      PluginInputError,
    );
    await expect(run({ operation: 'parse' })).rejects.toThrow(
      'parameter "text" is required to parse',
    );
  });
});
