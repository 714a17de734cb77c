import { readFile } from 'node:fs/promises';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAjv } from '#definition/validation/ajv.js';
import { startTrellis, type Trellis } from '../support/harness.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

/** The example definitions of the README's "Workflow definitions" section (its `json` blocks). */
async function readmeDefinitions(): Promise<Record<string, unknown>[]> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## Workflow definitions');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((match) => JSON.parse(match[1]!) as Record<string, unknown>)
    .filter((value) => 'tasks' in value);
}

/** The served schema, fetched as an editor does (no credentials), compiled as JSON Schema 2020-12. */
async function servedValidator(): Promise<ValidateFunction> {
  const schema = await trellis.client().GET('/schemas/workflow-definition.json');
  return createAjv('2020-12', { allErrors: true, strict: false }).compile(schema);
}

/** Where and why a definition fails the schema, as `/tasks/0/parameters additionalProperties data`. */
function failures(validate: ValidateFunction, definition: unknown): string[] {
  if (validate(definition)) return [];
  return (validate.errors ?? []).map(
    (error: ErrorObject) =>
      `${error.instancePath} ${error.keyword} ${Object.values(error.params).join(',')}`,
  );
}

const task = (type: unknown, parameters?: unknown) => ({
  name: 'Definition',
  tasks: [{ name: 'T', type, ...(parameters === undefined ? {} : { parameters }) }],
});

describe('GET /schemas/workflow-definition.json', () => {
  it('is public, and validates the README examples, which the API stores too', async () => {
    const validate = await servedValidator();
    const examples = await readmeDefinitions();
    expect(examples.length).toBeGreaterThanOrEqual(2);
    const stored: string[] = [];
    for (const example of examples) {
      expect(failures(validate, example), String(example.name)).toEqual([]);
      // A subworkflow example calls a workflow by an id of the README's server: here, the first
      // example stored.
      const tasks = (example.tasks as Record<string, unknown>[]).map((task) =>
        'workflow' in task ? { ...task, workflow: stored[0] } : task,
      );
      const added = await trellis.admin.POST('/workflows/Add', {
        body: { definition: JSON.stringify({ ...example, tasks }) },
      });
      expect(added.name).toBe(example.name);
      stored.push(added.id);
    }
  });

  it("rejects a misspelled, missing or mistyped parameter of the task's plugin", async () => {
    const validate = await servedValidator();
    const misspelled = task({ plugin: 'Data/Json' }, { data: [1, 2], expression: '$sum($)' });
    expect(failures(validate, misspelled)).toContain(
      '/tasks/0/parameters additionalProperties data',
    );
    expect(failures(validate, task({ plugin: 'Net/Http' }))).toContain(
      '/tasks/0 required parameters',
    );
    expect(failures(validate, task({ plugin: 'Net/Http' }, {}))).toContain(
      '/tasks/0/parameters required url',
    );
    // Types match case-insensitively, and a pinned version is typed by that version.
    const mistyped = task({ plugin: 'flow/delay', version: '1.0.0' }, { milliseconds: 'long' });
    expect(failures(validate, mistyped)).toContain('/tasks/0/parameters/milliseconds type integer');
  });

  it('accepts an expression wherever a value is typed, and leaves other tasks untyped', async () => {
    const validate = await servedValidator();
    const expressions = task(
      { plugin: 'Net/Http' },
      {
        url: "$[Variables('url')]",
        timeoutMilliseconds: "$[Variables('timeout')]",
        headers: { 'X-Run': 'run $[Variables("id")]' },
        allowedStatusCodes: [404, "$[Variables('also')]"],
      },
    );
    expect(failures(validate, expressions)).toEqual([]);
    expect(failures(validate, task('some-configuration', { anything: true }))).toEqual([]);
    expect(failures(validate, task({ plugin: 'Acme/Unknown' }, { anything: true }))).toEqual([]);
  });

  it('follows what is installed', async () => {
    const hasBase64 = async () => {
      const schema = await trellis.client().GET('/schemas/workflow-definition.json');
      return Object.keys(schema.$defs as object).includes('Data.Base64@1.0.0');
    };
    expect(await hasBase64()).toBe(true);
    await trellis.admin.DELETE('/plugins', { body: { Type: 'Data/Base64', Version: '1.0.0' } });
    expect(await hasBase64()).toBe(false);
    await trellis.admin.POST('/plugins', { body: { Type: 'Data/Base64', Version: '1.0.0' } });
    expect(await hasBase64()).toBe(true);
  });
});
