/**
 * Stored data comes back exactly as it was given (issue 17): any JSON value, with any keys
 * (`__proto__`, `constructor`, empty, unicode, snake_case...), nested as deep as the limits
 * allow, written through every API field and task output that holds JSON, reads back deeply
 * equal: the definition text, its variables and parameters (read back through expressions),
 * a task's output (read by a later task), log data, trigger properties and plugin settings.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstorableCharacter } from '#definition/storable-text.js';
import { definition, run, taskLogs, tasksOf } from '../support/engine-support.js';
import { startTrellis, type Trellis } from '../support/harness.js';

let trellis: Trellis;
let workflowId: string;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  workflowId = (
    await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify(definition([{ name: 'A', type: { plugin: 'Flow/NoOp' } }])),
      },
    })
  ).id;
});
afterAll(async () => {
  await trellis?.stop();
});

// ---------------------------------------------------------------------------------------------
// Arbitrary JSON, within what the API takes
// ---------------------------------------------------------------------------------------------

/** Text the API stores (no NUL, no unpaired surrogate) and that is not an expression. */
const text = fc
  .string({ unit: 'grapheme', maxLength: 12 })
  .filter((value) => unstorableCharacter(value) === null && !value.includes('$['));
const key = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '',
    ' ',
    'user_id',
    'HTTP_STATUS',
    'camelCase',
    'PascalCase',
    'a.b',
    'a[0]',
    'ключ',
    '鍵',
    '🔑',
    'e\u0301',
  ),
  text,
);
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  text,
);
/** An object with these entries as own properties, `__proto__` included (no `{...}` literal). */
const objectOf = (entries: Array<[string, unknown]>) => Object.fromEntries(entries);
const { json } = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: 'small', maxDepth: 6 }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 4 }),
  object: fc
    .uniqueArray(fc.tuple(key, tie('json')), { maxLength: 4, selector: ([name]) => name })
    .map(objectOf),
}));

/**
 * Objects and arrays nested `levels` deep around a scalar. The deepest a value gets below is
 * inside a task's parameters: definition → tasks → [0] → parameters → value, four levels above
 * it, so it may nest `Definitions.MaxDepth` - 4 levels itself.
 */
const deep = (maxLevels: number) =>
  fc
    .tuple(fc.integer({ min: 1, max: maxLevels }), fc.array(key, { minLength: 1 }), scalar)
    .map(([levels, keys, leaf]) => {
      let value: unknown = leaf;
      for (let level = 0; level < levels; level++) {
        value = level % 3 === 2 ? [value] : objectOf([[keys[level % keys.length]!, value]]);
      }
      return value;
    });

/** The value as JSON gives it back (-0 is 0): what any JSON API can promise. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** A canonical text of a JSON value: own keys sorted, so `__proto__` counts like any key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const keys = Object.keys(value).sort();
  const record = value as Record<string, unknown>;
  return `{${keys.map((name) => `${JSON.stringify(name)}:${canonical(record[name])}`).join(',')}}`;
}

function expectSame(actual: unknown, given: unknown, where: string): void {
  const expected = asJson(given);
  expect(canonical(actual), where).toBe(canonical(expected));
  expect(actual, where).toEqual(expected);
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

/** A message `echo <JSON>` as Flow/Log writes it with `data`, parsed back. */
const echoed = (message: string | undefined): unknown => {
  expect(message).toMatch(/^echo /);
  return JSON.parse(message!.slice('echo '.length));
};

/**
 * Stores `value` as a definition's variable and a task's parameter, runs it, and reads it back
 * through expressions: a task's output (`Outputs('Echo').value`) and a variable, both logged as
 * data; the stored definition text comes back as sent.
 */
async function throughARun(value: unknown, other: unknown): Promise<void> {
  const log = (name: string, data: string, after: string) => ({
    name,
    type: { plugin: 'Flow/Log' },
    dependencies: [after],
    parameters: { message: 'echo', data },
  });
  const sent = definition(
    [
      { name: 'Echo', type: { plugin: 'Flow/NoOp' }, parameters: { value, other } },
      log('FromOutput', "$[Outputs('Echo').value]", 'Echo'),
      log('FromOther', "$[Outputs('Echo').other]", 'Echo'),
      log('FromVariable', "$[Variables('v')]", 'Echo'),
    ],
    { variables: objectOf([['v', value]]) },
  );
  const { workflowId: id, executionId, execution } = await run(trellis, sent, 30_000);
  expect(execution.status).toBe('Completed');
  const stored = await trellis.admin.GET('/workflows/{workflowId}', {
    params: { path: { workflowId: id } },
  });
  expect(stored.workflow).toBe(JSON.stringify(sent));
  const tasks = await tasksOf(trellis.admin, id, executionId);
  const logged = async (task: string) =>
    echoed((await taskLogs(trellis.admin, id, executionId, tasks[task]!.id))[1]);
  expectSame(await logged('FromOutput'), value, 'a task output read by a later task');
  expectSame(await logged('FromOther'), other, 'a task output read by a later task');
  expectSame(await logged('FromVariable'), value, 'a variable read by a task');
  await trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId: id } } });
}

/** Writes `value` as a Manual trigger's properties and as plugin settings, and reads them back. */
async function throughTheApi(value: unknown, name: string): Promise<void> {
  const properties = objectOf([
    ['p', value],
    [name, value],
  ]);
  const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type: 'Manual', status: 'Active', properties },
  });
  const trigger = await trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
    params: { path: { workflowId, triggerId } },
  });
  expectSame(trigger.properties, properties, 'trigger properties');
  await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
    params: { path: { workflowId, triggerId } },
  });

  // Net/Http's `headers` setting takes any object.
  const headers = objectOf([[name, value]]);
  const { id } = await trellis.admin.POST('/config', {
    body: {
      name: `round-trip-${crypto.randomUUID()}`,
      type: 'Net/Http',
      version: '1.0.0',
      specifications: { headers },
    },
  });
  const configuration = await trellis.admin.GET('/config/{configId}', {
    params: { path: { configId: id } },
  });
  expectSame(configuration.specifications, { headers }, 'plugin settings');
  await trellis.admin.DELETE('/config/{configId}', { params: { path: { configId: id } } });
}

describe('stored data round trips', () => {
  it('keeps `__proto__` an own property through every layer, and pollutes nothing', async () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    await throughARun(value, [value]);
    await throughTheApi(value, '__proto__');
    const echoedBack = (
      await trellis.admin
        .POST('/workflows/{workflowId}/triggers', {
          params: { path: { workflowId } },
          body: { workflowId, type: 'Manual', status: 'Active', properties: value },
        })
        .then(({ triggerId }) =>
          trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
            params: { path: { workflowId, triggerId } },
          }),
        )
    ).properties as Record<string, unknown>;
    expect(Object.hasOwn(echoedBack, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(echoedBack)).toBe(Object.prototype);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('gives back any JSON value through the API: trigger properties and plugin settings', async () => {
    const maxDepth = trellis.config.Server.MaxBodyDepth;
    // body → properties → p → value: three levels above the value.
    await fc.assert(fc.asyncProperty(fc.oneof(json, deep(maxDepth - 3)), key, throughTheApi), {
      numRuns: 40,
    });
  }, 60_000);

  it('gives back any JSON value through a run: variables, parameters, outputs and log data', async () => {
    const maxDepth = trellis.config.Definitions.MaxDepth;
    await fc.assert(fc.asyncProperty(fc.oneof(json, deep(maxDepth - 4)), json, throughARun), {
      numRuns: 12,
    });
  }, 60_000);
});
