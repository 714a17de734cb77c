/**
 * Prints every import circle among the repository's own modules and fails when there is one.
 * Type-only imports count: a circle of types still ties the files' meaning together, and
 * eslint-plugin-import-x's `no-cycle` cannot see it (it skips `import type`).
 *
 *   npx tsx scripts/dev/import-circles.ts
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const skipped = new Set(['node_modules', 'dist', 'generated', '.git', '.trellis', '.tools']);
const sourceFile = /\.(ts|tsx|mts|js|mjs)$/;

function sources(folder: string, found: string[] = []): string[] {
  for (const name of readdirSync(folder)) {
    if (skipped.has(name) || name.startsWith('.test-data')) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) sources(path, found);
    else if (sourceFile.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** The file a relative specifier names: sources import `.ts` files by their `.js` names. */
function resolved(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base.replace(/\.mjs$/, '.mts'),
    base,
    join(base, 'index.ts'),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

/** Each file's imports of other files here, type-only and re-exports included. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => resolved(file, fileName))
      .filter((target): target is string => target !== undefined && target !== file);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
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

const graph = importGraph(sources(root));
const found = circles(graph);
for (const component of found) {
  const members = new Set(component);
  console.error(`Import circle of ${component.length} files:`);
  for (const file of component) {
    const inside = (graph.get(file) ?? []).filter((target) => members.has(target));
    console.error(
      `  ${relative(root, file)} → ${inside.map((target) => relative(root, target)).join(', ')}`,
    );
  }
}
console.log(`${graph.size} modules, ${found.length} import circles.`);
if (found.length > 0) process.exitCode = 1;
