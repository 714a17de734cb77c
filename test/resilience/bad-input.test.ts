/**
 * Bad input (issue 5): fast-check over the workflow definition format and the request bodies,
 * paths and paging of the main endpoints. Whatever arrives, the answer is never a 5xx, a
 * rejection is the error envelope with a message, and nothing is stored by a rejected request:
 * every list holds exactly what was accepted, and every accepted definition parses again.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDefinition } from '#definition/parse.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';

let trellis: Trellis;
let authorization: string;
/** A stored, valid workflow the per-workflow endpoints are fuzzed against. */
let workflowId: string;
const validDefinition = JSON.stringify({
  name: 'fuzz-target',
  tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }],
});

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  authorization = basicAuthorization(users.admin.username, users.admin.password);
  workflowId = (
    await trellis.admin.POST('/workflows/Add', { body: { definition: validDefinition } })
  ).id;
});
afterAll(async () => {
  await trellis?.stop();
});

interface Answer {
  status: number;
  body: { data: unknown; messages: string[]; succeeded: boolean } | null;
}

/** Sends anything: a JSON value as the body, or `{ raw }` text sent as it is. */
async function send(method: string, path: string, body?: unknown): Promise<Answer> {
  const raw =
    body === undefined
      ? undefined
      : typeof body === 'object' && body !== null && 'raw' in body
        ? String(body.raw)
        : JSON.stringify(body);
  const response = await fetch(`${trellis.baseUrl}${path}`, {
    method,
    headers: {
      authorization,
      ...(raw !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(raw !== undefined ? { body: raw } : {}),
  });
  const text = await response.text();
  let parsed: Answer['body'] = null;
  try {
    parsed = JSON.parse(text) as Answer['body'];
  } catch {
    // checked below: every answer must be an envelope
  }
  return { status: response.status, body: parsed };
}

/** No 5xx; a rejection is the error envelope with at least one message. */
function expectHandled(answer: Answer, what: string): void {
  expect(
    answer.status,
    `${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`,
  ).toBeLessThan(500);
  if (answer.status !== 200) {
    expect(answer.body).toMatchObject({ data: null, succeeded: false });
    expect(answer.body?.messages.length).toBeGreaterThan(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const taskName = fc.oneof(
  fc.constantFrom('A', 'B', 'C', 'a', '', ' '),
  fc.string({ maxLength: 6 }),
);
const expression = fc.oneof(
  fc.constantFrom(
    "Outputs('A').value == 1",
    "Variables('region') == 'eu'",
    '(((',
    "Outputs('Nope')[",
    '$[Outputs(',
    '1 +',
    'process.exit(1)',
  ),
  fc.string({ maxLength: 20 }),
);
const taskType = fc.oneof(
  fc.constant({ plugin: 'Flow/NoOp' }),
  fc.constant({ plugin: 'Flow/NoOp', version: '1.0.0' }),
  fc.record({
    plugin: fc.string({ maxLength: 12 }),
    version: fc.option(fc.string({ maxLength: 8 })),
  }),
  fc.constantFrom('no-such-configuration', ''),
  fc.jsonValue({ maxDepth: 2 }),
);
const errorHandling = fc.record(
  {
    strategy: fc.oneof(
      fc.constantFrom('Retry', 'Skip', 'Abort', 'TriggerTask', 'Bogus'),
      fc.string(),
    ),
    retryPolicy: fc.record(
      {
        maxRetries: fc.oneof(fc.integer({ min: -5, max: 20 }), fc.double(), fc.string()),
        backoffStrategy: fc.constantFrom('Fixed', 'Linear', 'Exponential', 'Jitter', 'Nope'),
        initialDelayMilliseconds: fc.integer({ min: -1000, max: 100_000 }),
        maxDelayMilliseconds: fc.integer({ min: -1000, max: 100_000 }),
        backoffCoefficient: fc.oneof(fc.double(), fc.integer()),
      },
      { requiredKeys: [] },
    ),
    triggerTask: taskName,
  },
  { requiredKeys: [] },
);
const task = fc.record(
  {
    name: taskName,
    type: taskType,
    dependencies: fc.oneof(fc.array(taskName, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
    runOnFailureOf: fc.array(taskName, { maxLength: 2 }),
    parameters: fc.oneof(
      fc.dictionary(
        fc.string({ maxLength: 6 }),
        fc.oneof(
          expression.map((e) => `$[${e}]`),
          fc.jsonValue({ maxDepth: 2 }),
        ),
      ),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    executionCondition: fc.oneof(fc.record({ expression }), fc.jsonValue({ maxDepth: 1 })),
    errorHandling,
    timeoutMilliseconds: fc.oneof(
      fc.integer({ min: -10, max: 10_000_000 }),
      fc.double(),
      fc.string(),
    ),
    manualApproval: fc.record({ enabled: fc.boolean(), comment: fc.string({ maxLength: 10 }) }),
  },
  { requiredKeys: [] },
);
const definitionObject = fc.record(
  {
    name: fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('fuzz-target', ''),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    description: fc.string({ maxLength: 20 }),
    variables: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    configuration: fc.record(
      {
        degreeOfParallelism: fc.oneof(fc.integer({ min: -5, max: 5000 }), fc.string()),
        timeoutMilliseconds: fc.oneof(fc.integer({ min: -5, max: 10_000_000 }), fc.double()),
        errorHandling,
      },
      { requiredKeys: [] },
    ),
    tasks: fc.oneof(fc.array(task, { maxLength: 5 }), fc.jsonValue({ maxDepth: 1 })),
  },
  { requiredKeys: [] },
);
/** Where a mutation lands: a path into the value; negative indexes count from the end. */
type Path = (string | number)[];
const deleted = Symbol('deleted');

/** A copy of `value` with `path` set to `replacement` (or removed), creating objects on the way. */
function mutate(value: unknown, path: Path, replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let target: Record<string | number, unknown> = copy;
  for (const [index, raw] of path.entries()) {
    const key =
      typeof raw === 'number' && Array.isArray(target)
        ? (raw + target.length) % target.length
        : raw;
    if (index === path.length - 1) {
      if (replacement === deleted) delete target[key];
      else target[key] = replacement;
    } else {
      const next = target[key];
      if (typeof next !== 'object' || next === null) target[key] = {};
      target = target[key] as Record<string | number, unknown>;
    }
  }
  return copy;
}

/** Values a mutation writes: anything JSON, expressions, numbers at the edges, or removal. */
const mutationValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  expression,
  expression.map((text) => `$[${text}]`),
  fc.constantFrom(
    -1,
    0,
    1.5,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    'A',
    ['A', 'A'],
    deleted,
  ),
);

/**
 * Mostly valid values with at most one thing wrong: `valid` as it is (about a third of the
 * time), or with one of `paths` replaced by a mutation value. Both the accepting and the
 * rejecting side of each endpoint get exercised.
 */
const mutated = <T>(valid: fc.Arbitrary<T>, paths: Path[]) =>
  fc
    .tuple(valid, fc.option(fc.tuple(fc.constantFrom(...paths), mutationValue), { freq: 3 }))
    .map(([value, change]) => (change ? mutate(value, change[0], change[1]) : value));

const identifier = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,11}$/);
/** A valid definition: a small DAG of `Flow/NoOp`, each task after the first depending on an earlier one. */
const validDefinitionObject = fc
  .tuple(
    identifier,
    fc.uniqueArray(identifier, {
      minLength: 1,
      maxLength: 5,
      comparator: (a, b) => a.toLowerCase() === b.toLowerCase(),
    }),
    fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
    fc.boolean(),
  )
  .map(([name, names, picks, limited]) => ({
    name: `fuzz-${name}`,
    ...(limited ? { configuration: { degreeOfParallelism: 2 } } : {}),
    tasks: names.map((task, index) => ({
      name: task,
      type: { plugin: 'Flow/NoOp' },
      ...(index > 0 ? { dependencies: [names[picks[index]! % index]!] } : {}),
    })),
  }));
const definitionPaths: Path[] = [
  ['name'],
  ['tasks'],
  ['tasks', 0],
  ['tasks', 0, 'name'],
  ['tasks', -1, 'name'],
  ['tasks', 0, 'type'],
  ['tasks', 0, 'type', 'plugin'],
  ['tasks', 0, 'type', 'version'],
  ['tasks', 0, 'dependencies'],
  ['tasks', -1, 'dependencies'],
  ['tasks', -1, 'dependencies', 0],
  ['tasks', -1, 'runOnFailureOf'],
  ['tasks', 0, 'parameters'],
  ['tasks', 0, 'parameters', 'x'],
  ['tasks', 0, 'executionCondition'],
  ['tasks', -1, 'executionCondition', 'expression'],
  ['tasks', 0, 'errorHandling'],
  ['tasks', 0, 'errorHandling', 'strategy'],
  ['tasks', 0, 'errorHandling', 'retryPolicy', 'maxRetries'],
  ['tasks', 0, 'errorHandling', 'retryPolicy', 'backoffStrategy'],
  ['tasks', 0, 'timeoutMilliseconds'],
  ['tasks', 0, 'manualApproval'],
  ['configuration'],
  ['configuration', 'degreeOfParallelism'],
  ['configuration', 'timeoutMilliseconds'],
  ['variables'],
  ['description'],
];
/** A definition with a cycle: the first task also depends on the last. */
const cyclic = validDefinitionObject
  .filter((value) => value.tasks.length > 1)
  .map((value) =>
    mutate(value, ['tasks', 0, 'dependencies'], [value.tasks[value.tasks.length - 1]!.name]),
  );

/** Keys in any letter case: definitions are read case-insensitively. */
const recased = (value: unknown, upper: boolean): unknown => {
  if (Array.isArray(value)) return value.map((item) => recased(item, upper));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      upper ? key.charAt(0).toUpperCase() + key.slice(1) : key,
      recased(item, upper),
    ]),
  );
};
/** Definition text: structured, re-cased, truncated, or no JSON at all. */
const definitionText = fc.oneof(
  {
    weight: 8,
    arbitrary: mutated(validDefinitionObject, definitionPaths).map((value) =>
      JSON.stringify(value),
    ),
  },
  { weight: 1, arbitrary: cyclic.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: definitionObject.map((value) => JSON.stringify(value)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(mutated(validDefinitionObject, definitionPaths), fc.boolean())
      .map(([value, upper]) => JSON.stringify(recased(value, upper))),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(validDefinitionObject, fc.nat()).map(([value, cut]) => {
      const text = JSON.stringify(value);
      return text.slice(0, cut % (text.length + 1));
    }),
  },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
);
/** A request body: mostly the right shape with bad contents, sometimes anything at all. */
const bodyAround = <T>(shaped: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 5, arbitrary: shaped },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.string().map((raw) => ({ raw })) },
  );
const uuidish = fc.oneof(
  fc.uuid(),
  fc.constantFrom('not-a-uuid', '', '00000000-0000-0000-0000-000000000000', "1' or '1'='1"),
  fc.string({ maxLength: 40 }),
);

// ---------------------------------------------------------------------------------------------
// Lists, to prove nothing rejected was stored
// ---------------------------------------------------------------------------------------------

async function ids(path: string): Promise<string[]> {
  const answer = await send('GET', path);
  expect(answer.status).toBe(200);
  return (answer.body!.data as { id: string }[]).map((item) => item.id).sort();
}

const runs = { numRuns: 200 };

describe('bad input', () => {
  it('POST /workflows/Add: any definition or body is a 200 or a 4xx, and only accepted ones are stored, valid', async () => {
    const before = await ids('/workflows');
    const accepted: string[] = [];
    await fc.assert(
      fc.asyncProperty(bodyAround(fc.record({ definition: definitionText })), async (body) => {
        const answer = await send('POST', '/workflows/Add', body);
        expectHandled(answer, `POST /workflows/Add ${JSON.stringify(body).slice(0, 300)}`);
        if (answer.status !== 200) return;
        const { id } = answer.body!.data as { id: string };
        accepted.push(id);
        const stored = await trellis.admin.GET('/workflows/{workflowId}', {
          params: { path: { workflowId: id } },
        });
        expect(parseDefinition(stored.workflow).ok).toBe(true);
      }),
      runs,
    );
    expect(await ids('/workflows')).toEqual([...before, ...accepted].sort());
  }, 240_000);

  it('PUT /workflows/{id}: a rejected update leaves the stored definition as it was', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyAround(
          mutated(fc.record({ workflowId: fc.constant(workflowId), definition: definitionText }), [
            ['workflowId'],
            ['definition'],
            ['extra'],
          ]),
        ),
        async (body) => {
          const answer = await send('PUT', `/workflows/${workflowId}`, body);
          expectHandled(answer, `PUT /workflows/{id} ${JSON.stringify(body).slice(0, 300)}`);
          const stored = await trellis.admin.GET('/workflows/{workflowId}', {
            params: { path: { workflowId } },
          });
          if (answer.status === 200) {
            expect(parseDefinition(stored.workflow).ok).toBe(true);
            await trellis.admin.PUT('/workflows/{workflowId}', {
              params: { path: { workflowId } },
              body: { workflowId, definition: validDefinition },
            });
          } else {
            expect(stored.workflow).toBe(validDefinition);
          }
        },
      ),
      runs,
    );
  }, 240_000);

  it('POST /config: bad configurations are rejected without a trace', async () => {
    const before = await ids('/config');
    const accepted: string[] = [];
    const configuration = mutated(
      fc.record({
        name: identifier.map((name) => `fuzz-config-${name}`),
        type: fc.constantFrom('Flow/NoOp', 'Flow/Delay'),
        version: fc.constant('1.0.0'),
        specifications: fc.constant({}),
      }),
      [['name'], ['type'], ['version'], ['specifications'], ['specifications', 'x'], ['extra']],
    );
    await fc.assert(
      fc.asyncProperty(bodyAround(configuration), async (body) => {
        const answer = await send('POST', '/config', body);
        expectHandled(answer, `POST /config ${JSON.stringify(body).slice(0, 300)}`);
        if (answer.status === 200) accepted.push((answer.body!.data as { id: string }).id);
      }),
      runs,
    );
    expect(await ids('/config')).toEqual([...before, ...accepted].sort());
  }, 240_000);

  it('POST /plugins: unknown or malformed packages are rejected and nothing is installed', async () => {
    const before = await ids('/plugins');
    const reference = fc.record(
      {
        Type: fc.oneof(
          fc.constantFrom('Flow/NoOp', 'Nope/Nope', 'Flow', '../../etc', ''),
          fc.string(),
        ),
        Version: fc.oneof(
          fc.constantFrom('1.0.0', 'latest', '0.0.0', '1.0', '^1', ''),
          fc.string(),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(bodyAround(reference), async (body) => {
        const answer = await send('POST', '/plugins', body);
        expectHandled(answer, `POST /plugins ${JSON.stringify(body).slice(0, 300)}`);
        // Every built-in is installed already and there is no registry: nothing can be new.
        expect(answer.status).not.toBe(200);
      }),
      runs,
    );
    expect(await ids('/plugins')).toEqual(before);
  }, 240_000);

  it('POST triggers and executions: bad bodies create no trigger, schedule or execution', async () => {
    const trigger = mutated(
      fc.record({
        workflowId: fc.constant(workflowId),
        type: fc.constantFrom('Manual', 'TimeBased'),
        status: fc.constantFrom('Active', 'DeActive'),
        properties: fc.record({
          cron: fc.constantFrom(
            '* * * * *',
            '*/5 * * * *',
            '0 3 * * 1-5',
            '0 0 31 2 *',
            '61 * * * *',
            '* * *',
            '@hourly',
            '',
          ),
          timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'Mars/Olympus'),
        }),
      }),
      [
        ['workflowId'],
        ['type'],
        ['status'],
        ['properties'],
        ['properties', 'cron'],
        ['properties', 'timezone'],
        ['extra'],
      ],
    );
    const accepted: string[] = [];
    await fc.assert(
      fc.asyncProperty(bodyAround(trigger), async (body) => {
        const answer = await send('POST', `/workflows/${workflowId}/triggers`, body);
        expectHandled(answer, `POST triggers ${JSON.stringify(body).slice(0, 300)}`);
        if (answer.status === 200) {
          accepted.push((answer.body!.data as { triggerId: string }).triggerId);
        }
      }),
      runs,
    );
    expect(await ids(`/workflows/${workflowId}/triggers`)).toEqual([...accepted].sort());
    for (const triggerId of accepted) {
      await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
        params: { path: { workflowId, triggerId } },
      });
    }

    let started = 0;
    await fc.assert(
      fc.asyncProperty(
        bodyAround(
          fc.record(
            { workflowId: fc.oneof(fc.constant(workflowId.toUpperCase()), uuidish) },
            { requiredKeys: [] },
          ),
        ),
        async (body) => {
          const answer = await send('POST', `/workflows/${workflowId}/executions`, body);
          expectHandled(answer, `POST executions ${JSON.stringify(body).slice(0, 300)}`);
          if (answer.status === 200) started += 1;
        },
      ),
      runs,
    );
    expect(await ids(`/workflows/${workflowId}/executions`)).toHaveLength(started);
  }, 240_000);

  it('paths and paging: malformed ids and page parameters are 400/404, never 5xx', async () => {
    const pageValue = fc.oneof(
      fc.integer({ min: -5, max: 2000 }).map(String),
      fc.constantFrom('', 'abc', '1.5', '1e3', '9999999999999999999999', '-0', ' 1'),
      fc.string({ maxLength: 8 }),
    );
    await fc.assert(
      fc.asyncProperty(
        uuidish,
        uuidish,
        pageValue,
        pageValue,
        fc.constantFrom('Running', 'Completed', 'Bogus', ''),
        fc.boolean(),
        async (first, second, page, pageSize, status, ofTarget) => {
          const query = `page=${encodeURIComponent(page)}&pageSize=${encodeURIComponent(pageSize)}`;
          const target = ofTarget ? workflowId : first;
          for (const path of [
            `/workflows/${encodeURIComponent(first)}`,
            `/workflows?${query}`,
            `/workflows/${encodeURIComponent(target)}/executions?${query}&status=${status}`,
            `/workflows/${encodeURIComponent(target)}/executions/${encodeURIComponent(second)}/logs?${query}`,
            `/workflows/${encodeURIComponent(target)}/executions/${encodeURIComponent(second)}/tasks`,
            `/workflows/${encodeURIComponent(target)}/triggers/${encodeURIComponent(second)}`,
            `/config/${encodeURIComponent(first)}`,
            `/plugins/${encodeURIComponent(first)}`,
          ]) {
            expectHandled(await send('GET', path), `GET ${path}`);
          }
          expectHandled(
            await send('DELETE', `/workflows/${encodeURIComponent(first)}`),
            'DELETE workflow',
          );
          expectHandled(
            await send(
              'POST',
              `/workflows/${encodeURIComponent(target)}/executions/${encodeURIComponent(second)}/cancel`,
            ),
            'POST cancel',
          );
        },
      ),
      { numRuns: 60 },
    );
    // The fuzzed DELETEs never hit the target workflow (its id is not in `uuidish`).
    expect(await ids('/workflows')).toContain(workflowId);
  }, 240_000);
});
