import { describe, expect, it } from 'vitest';
import { canonicalDefinitionText, unifiedDiff } from './definition-diff.js';

const numbers = (change: (n: number) => string | null = String) =>
  `${Array.from({ length: 20 }, (_, at) => change(at + 1))
    .filter((line) => line !== null)
    .join('\n')}\n`;

const diff = (before: string | null, after: string | null) =>
  unifiedDiff({ label: 'a/x', text: before }, { label: 'b/x', text: after });

describe('canonicalDefinitionText', () => {
  it('writes the same text whatever the order of the keys', () => {
    const one = canonicalDefinitionText({ name: 'A', tasks: [{ type: 'T', name: 'x' }] });
    const other = canonicalDefinitionText({ tasks: [{ name: 'x', type: 'T' }], name: 'A' });
    expect(one).toBe(other);
    expect(one).toBe(
      '{\n  "name": "A",\n  "tasks": [\n    {\n      "name": "x",\n      "type": "T"\n    }\n  ]\n}\n',
    );
  });
});

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(diff(numbers(), numbers())).toBe('');
  });

  it('writes what diff -u writes: three lines of context, changes far apart in hunks of their own', () => {
    const after = numbers((n) => (n === 3 ? 'three' : n === 17 ? 'seventeen' : String(n)));
    expect(diff(numbers(), after)).toBe(
      [
        '--- a/x',
        '+++ b/x',
        '@@ -1,6 +1,6 @@',
        ' 1',
        ' 2',
        '-3',
        '+three',
        ' 4',
        ' 5',
        ' 6',
        '@@ -14,7 +14,7 @@',
        ' 14',
        ' 15',
        ' 16',
        '-17',
        '+seventeen',
        ' 18',
        ' 19',
        ' 20',
        '',
      ].join('\n'),
    );
  });

  it('joins changes within six lines into one hunk, and labels a missing side /dev/null', () => {
    const after = numbers((n) => (n === 10 ? null : String(n)));
    expect(diff(numbers(), after).split('\n').slice(0, 3)).toEqual([
      '--- a/x',
      '+++ b/x',
      '@@ -7,7 +7,6 @@',
    ]);
    const added = diff(null, '1\n2\n');
    expect(added).toBe('--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+1\n+2\n');
    expect(diff('1\n', null)).toBe('--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n');
  });
});
