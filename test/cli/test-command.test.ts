/**
 * `trellis test` and `trellis apply --test` end to end: the CLI's own process against a real
 * Trellis and worker, with folders of definition files carrying test cases; checked by the
 * output, the exit codes, the JUnit XML as a real XML parser (Python's expat) reads it, and what
 * the API shows afterwards.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import { runCli, type CliResult } from '../support/cli.js';

let trellis: Trellis;
let folder: string;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-test-command-'));
});
afterAll(async () => {
  await trellis?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

let projects = 0;
async function newProject() {
  const name = `cli-test-${++projects}`;
  await trellis.admin.POST('/projects', { body: { name } });
  const api: TrellisClient = clientIn(trellis, basicAs('admin'), name);
  const cli = (args: string[]) =>
    runCli(args, {
      env: {
        TRELLIS_URL: trellis.baseUrl,
        TRELLIS_USER: users.admin.username,
        TRELLIS_PASSWORD: users.admin.password,
        TRELLIS_PROJECT: name,
      },
    });
  return { api, cli };
}

async function newFolder(files: Record<string, object>): Promise<string> {
  const dir = path.join(folder, `folder-${++projects}`);
  await mkdir(dir);
  for (const [file, definition] of Object.entries(files)) {
    await writeFile(path.join(dir, file), `${JSON.stringify(definition, null, 2)}\n`);
  }
  return dir;
}

const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

/** Doubles its input with a pure task; its cases expect `expected` for 21. */
function doubler(expected: number, expression = "$[Inputs('n')] * 2") {
  return {
    name: 'Doubler',
    inputs: { n: { type: 'integer', required: true } },
    outputs: { result: "Outputs('Double').result" },
    tasks: [
      { name: 'Double', type: { plugin: 'Data/Json' }, parameters: { expression, input: {} } },
    ],
    tests: [
      { name: 'doubles 21', inputs: { n: 21 }, expect: { outputs: { result: expected } } },
      { name: 'doubles 0', inputs: { n: 0 }, expect: { outputs: { result: 0 } } },
    ],
  };
}

/** The JUnit file as Python's XML parser reads it: suites with their counts, cases, failures. */
async function parsedJunit(file: string) {
  const script = `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(json.dumps({"tag": root.tag, "tests": root.get("tests"), "failures": root.get("failures"), "suites": [
  {"name": s.get("name"), "tests": s.get("tests"), "failures": s.get("failures"), "skipped": s.get("skipped"), "cases": [
    {"name": c.get("name"), "classname": c.get("classname"),
     "failure": None if c.find("failure") is None else {"message": c.find("failure").get("message"), "text": c.find("failure").text},
     "skipped": None if c.find("skipped") is None else c.find("skipped").get("message")}
    for c in s.findall("testcase")]}
  for s in root.findall("testsuite")]}))
`;
  const { stdout } = await promisify(execFile)('python3', ['-c', script, file]);
  return JSON.parse(stdout) as {
    tag: string;
    tests: string;
    failures: string;
    suites: {
      name: string;
      tests: string;
      failures: string;
      skipped: string;
      cases: {
        name: string;
        classname: string;
        failure: { message: string; text: string } | null;
        skipped: string | null;
      }[];
    }[];
  };
}

describe('trellis test', () => {
  it("runs the cases of each file as a candidate (a new workflow's too), prints each, exits 5 on a failure and writes JUnit XML", async () => {
    const { api, cli } = await newProject();
    await api.POST('/workflows/Add', { body: { definition: JSON.stringify(doubler(42)) } });
    const dir = await newFolder({
      'Doubler.json': doubler(42, "$[Inputs('n')] * 2 + 1"),
      'Later.json': {
        name: 'Later',
        tasks: [{ name: 'A', type: { plugin: 'Flow/NoOp' } }],
        tests: [{ name: 'runs', expect: {} }],
      },
    });
    const junit = path.join(dir, 'results.xml');

    const result = await cli(['test', dir, '--junit', junit]);

    expect(result.code, printed(result)).toBe(5);
    expect(result.stdout).toContain('Doubler (Doubler.json)');
    expect(result.stdout).toMatch(
      /✗ doubles 21 \(\d+ ms\) execution [0-9a-f-]{36}\n {6}outputs\.result: expected 42, got 43\n/,
    );
    expect(result.stdout).toMatch(
      /✗ doubles 0 \(\d+ ms\).*\n {6}outputs\.result: expected 0, got 1\n/,
    );
    // The project has no workflow "Later": its case runs as a new workflow's, and stores nothing.
    expect(result.stdout).toMatch(/Later \(Later\.json\)\n {2}✓ runs \(\d+ ms\)\n/);
    expect(result.stdout).toContain('1 passed, 2 failed.');
    expect((await api.GET('/workflows', {})).map((workflow) => workflow.name)).toEqual(['Doubler']);

    const xml = await parsedJunit(junit);
    expect(xml).toMatchObject({ tag: 'testsuites', tests: '3', failures: '2' });
    expect(xml.suites).toEqual([
      {
        name: 'Doubler',
        tests: '2',
        failures: '2',
        skipped: '0',
        cases: [
          {
            name: 'doubles 21',
            classname: 'Doubler',
            failure: {
              message: 'outputs.result: expected 42, got 43',
              text: 'outputs.result: expected 42, got 43',
            },
            skipped: null,
          },
          {
            name: 'doubles 0',
            classname: 'Doubler',
            failure: {
              message: 'outputs.result: expected 0, got 1',
              text: 'outputs.result: expected 0, got 1',
            },
            skipped: null,
          },
        ],
      },
      {
        name: 'Later',
        tests: '1',
        failures: '0',
        skipped: '0',
        cases: [{ name: 'runs', classname: 'Later', failure: null, skipped: null }],
      },
    ]);

    // One file of the folder.
    const one = await cli(['test', path.join(dir, 'Doubler.json')]);
    expect(one.code, printed(one)).toBe(5);
    expect(one.stdout).toContain('0 passed, 2 failed.');

    // The stored workflow's own revision passes; the candidate changed nothing.
    const stored = await cli(['test', 'Doubler', '--junit', junit]);
    expect(stored.code, printed(stored)).toBe(0);
    expect(stored.stdout).toMatch(/✓ doubles 21 \(\d+ ms\)\n/);
    expect(stored.stdout).toContain('2 passed, 0 failed.');
    expect((await parsedJunit(junit)).failures).toBe('0');
  });

  it('names the file of a definition whose cases are invalid (exit 1)', async () => {
    const { api, cli } = await newProject();
    await api.POST('/workflows/Add', { body: { definition: JSON.stringify(doubler(42)) } });
    const bad = doubler(42);
    bad.tests[1]!.name = 'doubles 21';
    const dir = await newFolder({ 'Doubler.json': bad });

    const result = await cli(['test', dir]);

    expect(result.code, printed(result)).toBe(1);
    expect(result.stderr).toContain('Doubler.json: tests[1].name: repeats the name of tests[0]');
  });
});

describe('trellis apply --test', () => {
  it('applies nothing when a case fails, naming each failed case; applies when they pass', async () => {
    const { api, cli } = await newProject();
    await api.POST('/workflows/Add', { body: { definition: JSON.stringify(doubler(42)) } });
    const failing = await newFolder({ 'Doubler.json': doubler(42, "$[Inputs('n')] * 3") });

    const refused = await cli(['apply', failing, '--test']);

    expect(refused.code, printed(refused)).toBe(5);
    expect(refused.stderr).toContain('Nothing was applied: 1 test case failed.');
    expect(refused.stderr).toMatch(
      /Doubler \/ doubles 21: outputs\.result: expected 42, got 63 \(execution [0-9a-f-]{36}\)/,
    );
    const [workflow] = await api.GET('/workflows', {});
    expect(workflow?.revision).toBe(1);

    const passing = await newFolder({
      'Doubler.json': doubler(42, "$[Inputs('n')] + $[Inputs('n')]"),
    });
    const applied = await cli(['apply', passing, '--test']);
    expect(applied.code, printed(applied)).toBe(0);
    expect(applied.stdout).toContain('2 passed, 0 failed.');
    expect(applied.stdout).toContain('Applied: 0 created, 1 updated, 0 unchanged, 0 deleted.');
    const [updated] = await api.GET('/workflows', {});
    expect(updated?.revision).toBe(2);
  });

  it("applies nothing when a new workflow's case fails, the stored ones' passing", async () => {
    const { api, cli } = await newProject();
    await api.POST('/workflows/Add', { body: { definition: JSON.stringify(doubler(42)) } });
    const tripler = {
      ...doubler(63, "$[Inputs('n')] * 2"),
      name: 'Tripler',
      tests: [{ name: 'triples 21', inputs: { n: 21 }, expect: { outputs: { result: 63 } } }],
    };
    const dir = await newFolder({ 'Doubler.json': doubler(42), 'Tripler.json': tripler });
    const junit = path.join(dir, 'results.xml');

    const refused = await cli(['apply', dir, '--test']);

    expect(refused.code, printed(refused)).toBe(5);
    expect(refused.stdout).toContain('2 passed, 1 failed.');
    expect(refused.stderr).toContain('Nothing was applied: 1 test case failed.');
    expect(refused.stderr).toMatch(
      /Tripler \/ triples 21: outputs\.result: expected 63, got 42 \(execution [0-9a-f-]{36}\)/,
    );
    expect((await api.GET('/workflows', {})).map((workflow) => workflow.name)).toEqual(['Doubler']);
    const tested = await cli(['test', dir, '--junit', junit]);
    expect(tested.code, printed(tested)).toBe(5);
    const xml = await parsedJunit(junit);
    expect(
      xml.suites.map(({ name, tests, failures, skipped }) => ({ name, tests, failures, skipped })),
    ).toEqual([
      { name: 'Doubler', tests: '2', failures: '0', skipped: '0' },
      { name: 'Tripler', tests: '1', failures: '1', skipped: '0' },
    ]);

    const fixed = await newFolder({
      'Doubler.json': doubler(42),
      'Tripler.json': { ...tripler, tasks: doubler(63, "$[Inputs('n')] * 3").tasks },
    });
    const applied = await cli(['apply', fixed, '--test']);
    expect(applied.code, printed(applied)).toBe(0);
    expect(applied.stdout).toContain('3 passed, 0 failed.');
    expect(applied.stdout).toContain('Applied: 1 created, 0 updated, 1 unchanged, 0 deleted.');
    expect((await api.GET('/workflows', {})).map((workflow) => workflow.name)).toEqual([
      'Doubler',
      'Tripler',
    ]);
  });
});

describe('trellis replay', () => {
  it('prints where a candidate diverges on the latest runs, and exits 5 with --fail-on-divergence', async () => {
    const { api, cli } = await newProject();
    const { id: workflowId } = await api.POST('/workflows/Add', {
      body: { definition: JSON.stringify(doubler(42)) },
    });
    const real = await api.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: { inputs: { n: 5 } },
    });
    expect(real.status).toBe('Completed');
    const dir = await newFolder({ 'Doubler.json': doubler(42, "$[Inputs('n')] * 3") });
    const file = path.join(dir, 'Doubler.json');

    const shown = await cli(['replay', 'Doubler', '-f', file, '--last', '3']);
    expect(shown.code, printed(shown)).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(`✗ ${real.executionId} \\(Completed → Completed\\) replay [0-9a-f-]{36}\\n`),
    );
    expect(shown.stdout).toContain('    taskOutput: task Double gave another output\n');
    expect(shown.stdout).toContain('    output: outputs.result was 10, is 15\n');
    expect(shown.stdout).toContain('Replayed 1 execution: 1 diverged.');

    const gated = await cli(['replay', 'Doubler', '-f', file, '--fail-on-divergence']);
    expect(gated.code, printed(gated)).toBe(5);
    const same = await newFolder({ 'Doubler.json': doubler(42) });
    const unchanged = await cli([
      'replay',
      'Doubler',
      '-f',
      path.join(same, 'Doubler.json'),
      '--fail-on-divergence',
    ]);
    expect(unchanged.code, printed(unchanged)).toBe(0);
    expect(unchanged.stdout).toContain('Replayed 1 execution: 0 diverged.');
  });
});
