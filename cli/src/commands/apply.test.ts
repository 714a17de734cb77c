import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { coloured, fileNameOf } from './apply.js';

const diff = '--- a/A.json\n+++ b/A.json\n@@ -1 +1 @@\n-old\n+new\n same\n';

describe('coloured', () => {
  it('marks removed lines red, added ones green, hunks cyan and the file names bold', () => {
    const colors = pc.createColors(true);
    expect(coloured(diff, colors).split('\n')).toEqual([
      colors.bold('--- a/A.json'),
      colors.bold('+++ b/A.json'),
      colors.cyan('@@ -1 +1 @@'),
      colors.red('-old'),
      colors.green('+new'),
      ' same',
    ]);
  });

  it('leaves the diff as it is without colours', () => {
    expect(coloured(diff, pc.createColors(false))).toBe(diff.trimEnd());
  });
});

describe('fileNameOf', () => {
  it('is the workflow name with what no file name may hold replaced', () => {
    expect(fileNameOf('Nightly report')).toBe('Nightly report.json');
    expect(fileNameOf('a/b\\c:d')).toBe('a_b_c_d.json');
    expect(fileNameOf('.hidden')).toBe('_hidden.json');
  });
});
