import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
const run = (parameters: Record<string, unknown>) => runPluginFolder(folder, { parameters });
const orders = {
  orders: [
    { id: 1, status: 'open', total: 10.5 },
    { id: 2, status: 'closed', total: 4 },
    { id: 3, status: 'open', total: 1.5 },
  ],
};

describe('Data/Json', () => {
  it('selects and aggregates with JSONata', async () => {
    expect(await run({ expression: "orders[status='open'].id", input: orders })).toEqual({
      result: [1, 3],
    });
    expect(await run({ expression: "$sum(orders[status='open'].total)", input: orders })).toEqual({
      result: 12,
    });
  });

  it('transforms into a new shape, with bindings', async () => {
    const output = await run({
      expression: 'orders.{"order": id, "region": $region}',
      input: orders,
      bindings: { region: 'eu' },
    });
    expect(output).toEqual({
      result: [
        { order: 1, region: 'eu' },
        { order: 2, region: 'eu' },
        { order: 3, region: 'eu' },
      ],
    });
  });

  it('parses JSON text input when asked, and returns null when nothing matches', async () => {
    expect(await run({ expression: 'a.b', input: '{"a":{"b":[1,2]}}', parseInput: true })).toEqual({
      result: [1, 2],
    });
    expect(await run({ expression: 'missing', input: orders })).toEqual({ result: null });
  });

  it('reports a bad expression as an input error', async () => {
    const attempt = run({ expression: 'orders[', input: orders });
    await expect(attempt).rejects.toThrow(PluginInputError);
    await expect(attempt).rejects.toThrow(/expression is not valid JSONata/);
  });
});
