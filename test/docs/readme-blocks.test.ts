/**
 * The README's walk-throughs, pasted in order into bash against a real Trellis: every command
 * exits 0 and gives the result the README shows for it.
 *
 * What runs: the ```sh and ```bash blocks under the headings in `walkThroughs` (and their
 * subsections), in the README's order, in one bash session (a variable one block exports is
 * there for the next), with curl and jq. Other blocks (```json, ```text, ...) are not commands.
 * The first block's `export TRELLIS=http://127.0.0.1:6262 AUTH='admin:<password from the
 * banner>'` gets this test's Trellis: its URL for `http://127.0.0.1:6262` and the admin's
 * password for `<password from the banner>`.
 *
 * What a command must give: a comment that starts as a JSON value does (`{`, `[`, `"`, a digit),
 * on the command's last line (`... | jq .data.status   # "Paused"`) or on the comment lines right
 * after it (`# {"status": "Completed", ...}`; a line starting `#  `, two spaces, goes on with the
 * line before), is its output: compared as JSON where both parse (each line a value; `...` as a
 * member or element means "and more", inside a string "any text"), else as text. Other comments
 * are prose.
 *
 * Markers:
 * - `# in another terminal` ending a command: it runs in the background while the next commands
 *   run, as in a second terminal, and must have ended by itself (exit 0) within 60 s of the last
 *   command (an event stream ends after the run's final status).
 * - `<!-- readme-test: skip, <reason> -->` on the line before a block's fence: the block is not
 *   run. Every skip is listed in `skips` below, so that none goes unnoticed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { outputShows, readBlocks, readCommands, type Command } from './readme-blocks.js';

const walkThroughs = [
  'Walk-through with curl',
  'Following a run live',
  'Approvals',
  'Triggers, webhooks and revisions',
  'A walk-through: two teams and a partner',
  'API keys',
  'Fair shares',
  'Single sign-on',
];

/** The blocks of those sections that are not run: their heading, and the reason their marker gives. */
const skips = [
  'Approvals that carry data and reach people: needs the PayInvoice workflow and a user treasurer',
  'Workflows as code: runs the trellis CLI (signed in as under "Command line") in a Git repository; test/cli/apply.test.ts runs the same',
  'Workflow tests: runs the trellis CLI (signed in as under "Command line") on a folder; test/cli/test-command.test.ts runs the same',
];

const readme = path.join(import.meta.dirname, '../../README.md');

let trellis: Trellis;
let folder: string;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  folder = await mkdtemp(path.join(tmpdir(), 'trellis-readme-'));
});

afterAll(async () => {
  await trellis?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/**
 * One bash script running every command (each from a file of its own, sourced, so that a
 * syntax error is that command's failure), each writing its output and exit status to files.
 */
async function script(commands: Command[]): Promise<string> {
  const files = (index: number) => `>"$out/${index}.out" 2>"$out/${index}.err"`;
  const lines = [
    `out=${JSON.stringify(folder)}`,
    'finish() { for _ in $(seq 600); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done',
    '  if kill -0 "$1" 2>/dev/null; then kill "$1"; echo "still running after 60 s" >"$out/$2.rc"',
    '  else wait "$1"; echo $? >"$out/$2.rc"; fi; }',
  ];
  const background: string[] = [];
  for (const [index, command] of commands.entries()) {
    const text = command.text
      .replaceAll('http://127.0.0.1:6262', trellis.baseUrl)
      .replaceAll('<password from the banner>', users.admin.password);
    await writeFile(path.join(folder, `${index}.sh`), `${text}\n`);
    const run = `. "$out/${index}.sh" ${files(index)}`;
    if (command.background) {
      lines.push(`${run} & pid${index}=$!`);
      background.push(`finish "$pid${index}" ${index}`);
    } else lines.push(`${run}; echo $? >"$out/${index}.rc"`);
  }
  const file = path.join(folder, 'walk-through.sh');
  await writeFile(file, [...lines, ...background, ''].join('\n'));
  return file;
}

it('runs the README walk-throughs and gets what they show', async () => {
  const blocks = readBlocks(await readFile(readme, 'utf8')).filter(
    (block) =>
      (block.language === 'sh' || block.language === 'bash') &&
      block.headings.some((title) => walkThroughs.includes(title)),
  );
  expect(
    blocks
      .filter((block) => block.skipped)
      .map((block) => `${block.headings.at(-1)}: ${block.skipped}`),
  ).toEqual(skips);
  const commands = blocks.filter((block) => !block.skipped).flatMap(readCommands);
  // A heading renamed would otherwise leave its section out without a word.
  expect(
    walkThroughs.filter(
      (title) => !commands.some((command) => command.block.headings.includes(title)),
    ),
  ).toEqual([]);
  expect(commands.filter((command) => command.expected !== undefined).length).toBeGreaterThan(10);

  const stopped = await promisify(execFile)('bash', [await script(commands)], {
    cwd: folder,
    timeout: 150_000,
  }).then(
    () => 'never ran',
    (error: Error) => `never ran: the walk-through was stopped (${error.message})`,
  );

  const problems: string[] = [];
  for (const [index, command] of commands.entries()) {
    const read = (suffix: string) =>
      readFile(path.join(folder, `${index}.${suffix}`), 'utf8').catch(() => stopped);
    const [status, output, errors] = await Promise.all([read('rc'), read('out'), read('err')]);
    const where = `README.md:${command.line} (${command.block.headings.join(' > ')})\n${command.text}`;
    if (status.trim() !== '0') {
      problems.push(`${where}\nexited ${status.trim()}: ${errors}${output}`);
    } else if (command.expected !== undefined && !outputShows(command.expected, output)) {
      problems.push(`${where}\nshows:\n${command.expected}\ngave:\n${output}${errors}`);
    }
  }
  expect(problems.join('\n\n')).toBe('');
}, 180_000);
