import { describe, expect, it } from 'vitest';
import { inputsSchema, runTool, runToolNames } from './run-tools.js';

describe('inputsSchema', () => {
  it('makes each declared input a property of its type; required only without a default; nothing else', () => {
    expect(
      inputsSchema({
        region: { type: 'string', required: true, description: 'Where.' },
        limit: { type: 'integer', required: true, default: 10 },
        dryRun: { type: 'boolean' },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        region: { type: 'string', description: 'Where.' },
        limit: { type: 'integer', default: 10 },
        dryRun: { type: 'boolean' },
      },
      required: ['region'],
      additionalProperties: false,
    });
    expect(inputsSchema({})).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
  });
});

describe('runToolNames', () => {
  const id = (n: number) => `${n}0000000-0000-4000-8000-000000000000`;

  it('names each workflow run_<name>, anything but letters, digits, _ and - made _', () => {
    const names = runToolNames([
      { id: id(1), name: 'Nightly report' },
      { id: id(2), name: 'étape.2' },
    ]);
    expect([...names.keys()]).toEqual(['run_Nightly_report', 'run__tape_2']);
  });

  it('gives names that come out alike, and long ones, the start of their id', () => {
    const names = runToolNames([
      { id: id(1), name: 'a b' },
      { id: id(2), name: 'a_b' },
      { id: id(3), name: 'x'.repeat(80) },
    ]);
    expect([...names.keys()]).toEqual([
      'run_a_b_10000000',
      'run_a_b_20000000',
      `run_${'x'.repeat(51)}_30000000`,
    ]);
    for (const name of names.keys()) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe('runTool', () => {
  it('reads the declarations case-insensitively, as the server does', () => {
    const definition = JSON.stringify({
      Name: 'Totals',
      Description: 'Adds numbers up.',
      Inputs: { values: { Type: 'array', Required: true } },
      Outputs: { total: 'Outputs("Sum").result' },
      Tasks: [],
    });
    const tool = runTool('run_Totals', { id: 'some-id', name: 'Totals' }, definition);
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { values: { type: 'array' } },
      required: ['values'],
      additionalProperties: false,
    });
    expect(tool.description).toContain('Adds numbers up.');
    expect(tool.description).toContain('A completed run gives back: total.');
  });
});
