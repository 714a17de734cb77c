/**
 * The house in numbers: each room's size, the imports between rooms, and what breaks its rules —
 * an import circle (type-only imports count), an import a room's `mayImport` does not allow
 * (one that runs back up), or an import that climbs into another room by a relative path where
 * it should use the room's name (`#store/…`). Fails when any of the three is found.
 *
 *   npm run house            (npm run lint runs it with --quiet)
 *
 * The rooms and what each may import are eslint.config.js's `mayImport`, which lint enforces.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { mayImport } from '../../eslint.config.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const skipped = new Set(['node_modules', 'dist', 'generated', '.git', '.trellis', '.tools']);
const sourceFile = /\.(ts|tsx|mts|js|mjs)$/;
const testFile = /\.test\.(ts|tsx|js)$/;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  imports: Record<string, string>;
};
const nameImports = manifest.imports;

function sources(folder: string, found: string[] = []): string[] {
  for (const name of readdirSync(folder)) {
    if (skipped.has(name) || name.startsWith('.test-data')) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) sources(path, found);
    else if (sourceFile.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** The file a specifier names: relative, or a `#room/…` name of package.json's `imports`. */
function resolved(from: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith('.')) base = resolve(dirname(from), specifier);
  else if (specifier.startsWith('#')) {
    const key = Object.keys(nameImports).find((pattern) =>
      specifier.startsWith(pattern.slice(0, -1)),
    );
    if (!key) return undefined;
    base = join(root, nameImports[key]!.slice(0, -1), specifier.slice(key.length - 1));
  } else return undefined;
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base.replace(/\.mjs$/, '.mts'),
    base,
    join(base, 'index.ts'),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

/** The rooms `room` may import. */
const allowed = (room: string): string[] => mayImport[room] ?? [];
const rooms = Object.keys(mayImport).sort((a, b) => b.length - a.length);
/** The room a file is in: the longest room path holding it. */
const roomOf = (file: string) =>
  rooms.find((room) => relative(root, file).startsWith(`${room}/`)) ?? null;

interface Edge {
  from: string;
  to: string;
  specifier: string;
}

const files = sources(root);
const graph = new Map<string, string[]>();
const edges: Edge[] = [];
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets: string[] = [];
  for (const { fileName } of importedFiles) {
    const target = resolved(file, fileName);
    if (target === undefined || target === file) continue;
    targets.push(target);
    edges.push({ from: file, to: target, specifier: fileName });
  }
  graph.set(file, [...new Set(targets)]);
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

const quiet = process.argv.includes('--quiet');
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').length;
const show = (file: string) => relative(root, file);

if (!quiet) console.log('Rooms (source files and lines, tests apart):');
for (const room of quiet ? [] : Object.keys(mayImport)) {
  const own = files.filter((file) => roomOf(file) === room);
  const source = own.filter((file) => !testFile.test(file));
  const total = source.reduce((sum, file) => sum + lines(file), 0);
  console.log(
    `  ${room.padEnd(22)} ${String(source.length).padStart(4)} files ${String(total).padStart(7)} lines` +
      `   may import: ${
        allowed(room)
          .filter((other) => other !== room)
          .join(', ') || '(nothing)'
      }`,
  );
}

// Tests may reach whatever they test and the harness they run on: they count for circles only.
const crossing = edges.filter(({ from, to }) => {
  if (testFile.test(from)) return false;
  const [a, b] = [roomOf(from), roomOf(to)];
  return a !== null && b !== null && a !== b;
});
const upward = crossing.filter(({ from, to }) => !allowed(roomOf(from)!).includes(roomOf(to)!));
// The workspace packages (the console, the CLI) cannot use the root package's `#` names: a
// package's own `imports` may only name files inside it.
const ownPackages = ['cli', 'console', 'sdk', 'plugin-kit'];
const climbing = crossing.filter(
  ({ from, to, specifier }) =>
    specifier.startsWith('.') &&
    !ownPackages.includes(roomOf(from)!) &&
    nameImports[`#${roomOf(to)!.split('/').pop()}/*`] !== undefined,
);
const found = circles();

const report = (title: string, items: string[]) => {
  if (quiet && items.length === 0) return;
  console.log(`${title}: ${items.length}`);
  for (const item of items.slice(0, 50)) console.log(`  ${item}`);
};
report(
  'Import circles',
  found.map((component) => component.map(show).join(' → ')),
);
report(
  'Imports a room may not make (they run back up)',
  upward.map(({ from, to }) => `${show(from)} → ${show(to)}`),
);
report(
  'Imports that climb into another room by path, not by its name',
  climbing.map(({ from, specifier }) => `${show(from)}: ${specifier}`),
);
const problems = found.length + upward.length + climbing.length;
if (quiet && problems === 0) {
  console.log(`house: ${files.length} modules, no import circle, none up, none climbing.`);
}
if (problems > 0) process.exitCode = 1;
