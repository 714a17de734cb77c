import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from './failures.js';
import { addInput, runInputs } from './inputs.js';

describe('addInput', () => {
  it('reads values as JSON when they parse, else as text', () => {
    const inputs = ['n=3', 'on=true', 'list=[1,"a"]', 'obj={"a":1}', 'region=eu', 'code=007']
      .concat(['quoted="true"', 'empty=', 'expr=a=b', 'nothing=null'])
      .reduce((all, pair) => addInput(pair, all), {});
    expect(inputs).toEqual({
      n: 3,
      on: true,
      list: [1, 'a'],
      obj: { a: 1 },
      region: 'eu',
      code: '007',
      quoted: 'true',
      empty: '',
      expr: 'a=b',
      nothing: null,
    });
  });

  it('lets a later value of a key win, and keeps keys as given (__proto__ included)', () => {
    const inputs = addInput('__proto__={"x":1}', addInput('a=2', addInput('a=1')));
    expect(inputs.a).toBe(2);
    expect(Object.keys(inputs)).toEqual(['a', '__proto__']);
    expect(JSON.stringify(inputs)).toBe('{"a":2,"__proto__":{"x":1}}');
  });

  it('refuses a pair without a key', () => {
    expect(() => addInput('novalue')).toThrow(InvalidArgumentError);
    expect(() => addInput('=3')).toThrow(InvalidArgumentError);
  });
});

describe('runInputs', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'trellis-cli-inputs-'));
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('is undefined without inputs, and the --input values alone without a file', async () => {
    expect(await runInputs({})).toBeUndefined();
    expect(await runInputs({ input: { a: 1 } })).toEqual({ a: 1 });
  });

  it('puts each --input over the file', async () => {
    const file = path.join(folder, 'inputs.json');
    await writeFile(file, '{"a": 1, "b": [2]}');
    expect(await runInputs({ inputsFile: file, input: { a: 'x' } })).toEqual({ a: 'x', b: [2] });
  });

  it('refuses a file that is missing, not JSON, or not an object', async () => {
    const notJson = path.join(folder, 'not.json');
    const array = path.join(folder, 'array.json');
    await writeFile(notJson, '{a');
    await writeFile(array, '[1]');
    await expect(runInputs({ inputsFile: path.join(folder, 'none.json') })).rejects.toThrow(
      /Cannot read .*none\.json/,
    );
    await expect(runInputs({ inputsFile: notJson })).rejects.toThrow(UsageError);
    await expect(runInputs({ inputsFile: array })).rejects.toThrow(/must hold a JSON object/);
  });
});
