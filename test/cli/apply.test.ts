/**
 * `trellis apply` and `trellis export` end to end: the CLI's own process against a real Trellis,
 * with folders of definition files (one a Git repository made here), checked by the output, the
 * exit codes and what the API shows afterwards.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  trellis = await startTrellis();
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-apply-test-'));
});
afterAll(async () => {
  await trellis?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

let projects = 0;
/** A project of the test's own, and the CLI and API clients working in it. */
async function newProject() {
  const name = `cli-apply-${++projects}`;
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
const say = (message: string) => [
  { name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message } },
];

describe('trellis apply', () => {
  it('prints the diff with --dry-run and stores nothing, then applies it', async () => {
    const { api, cli } = await newProject();
    const dir = await newFolder({ 'Hello.json': { name: 'Hello', tasks: say('hello') } });

    const dry = await cli(['apply', dir, '--dry-run']);
    expect(dry.code, printed(dry)).toBe(0);
    expect(dry.stdout).toContain('--- /dev/null\n+++ b/Hello.json\n');
    expect(dry.stdout).toContain('+        "message": "hello"\n');
    expect(dry.stdout).toContain('Dry run: 1 to create, 0 to update, 0 unchanged, 0 to delete.');
    expect(dry.stdout).not.toContain('\u001b['); // no colours off a terminal
    expect(await api.GET('/workflows', {})).toEqual([]);

    const applied = await cli(['apply', dir]);
    expect(applied.code, printed(applied)).toBe(0);
    expect(applied.stdout).toContain('Applied: 1 created, 0 updated, 0 unchanged, 0 deleted.');
    expect((await api.GET('/workflows', {})).map(({ name }) => name)).toEqual(['Hello']);
  });

  it('refuses a folder with an invalid file, naming the file, exits 1 and stores nothing', async () => {
    const { api, cli } = await newProject();
    const dir = await newFolder({
      'Good.json': { name: 'Good', tasks: say('fine') },
      'Bad.json': { name: 'Bad', tasks: [{ name: 'X', type: { plugin: 'Flow/Nowhere' } }] },
    });
    const refused = await cli(['apply', dir]);
    expect(refused.code, printed(refused)).toBe(1);
    expect(refused.stderr).toMatch(/\(HTTP 400\)/);
    expect(refused.stderr).toMatch(/Bad\.json: .*Flow\/Nowhere/);
    expect(await api.GET('/workflows', {})).toEqual([]);
  });

  it('export writes the folder that applying again leaves as it is', async () => {
    const { api, cli } = await newProject();
    await api.POST('/workflows/Add', {
      body: { definition: JSON.stringify({ name: 'One', tasks: say('one') }) },
    });
    await api.POST('/workflows/Add', {
      body: { definition: JSON.stringify({ name: 'Two/Three', tasks: say('two') }) },
    });
    const out = path.join(folder, `export-${++projects}`);
    const exported = await cli(['export', out]);
    expect(exported.code, printed(exported)).toBe(0);
    expect(exported.stdout).toContain('Exported 2 workflows.');
    expect((await readdir(out)).sort()).toEqual(['One.json', 'Two_Three.json']);
    expect(JSON.parse(await readFile(path.join(out, 'One.json'), 'utf8'))).toEqual({
      name: 'One',
      tasks: say('one'),
    });

    const again = await cli(['apply', out, '--prune']);
    expect(again.code, printed(again)).toBe(0);
    expect(again.stdout.trim()).toBe('Applied: 0 created, 0 updated, 2 unchanged, 0 deleted.');
    expect((await api.GET('/workflows', {})).map(({ revision }) => revision)).toEqual([1, 1]);
  });

  it('applies a folder of a Git repository, recording the commit given with --source', async () => {
    const { api, cli } = await newProject();
    const repository = await newFolder({ 'Hello.json': { name: 'Hello', tasks: say('hello') } });
    const git = async (...args: string[]) =>
      (await promisify(execFile)('git', args, { cwd: repository })).stdout.trim();
    await git('init', '--quiet');
    await git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'add', '.');
    await git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-qm', 'one');
    const first = await git('rev-parse', 'HEAD');
    expect((await cli(['apply', repository, '--source', first])).code).toBe(0);

    await writeFile(
      path.join(repository, 'Hello.json'),
      JSON.stringify({ name: 'Hello', tasks: say('hello again') }, null, 2),
    );
    await git('-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-qam', 'two');
    const second = await git('rev-parse', 'HEAD');
    const applied = await cli(['apply', repository, '--source', second]);
    expect(applied.code, printed(applied)).toBe(0);
    expect(applied.stdout).toContain(
      '-        "message": "hello"\n+        "message": "hello again"\n',
    );

    const [hello] = await api.GET('/workflows', {});
    const revisions = await api.GET('/workflows/{workflowId}/revisions', {
      params: { path: { workflowId: hello!.id } },
    });
    expect(revisions.map(({ revision, source }) => ({ revision, source }))).toEqual([
      { revision: 2, source: second },
      { revision: 1, source: first },
    ]);
  });
});
