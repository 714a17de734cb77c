import Table from 'cli-table3';
import type { Colors } from './output.js';

/** Rows under a header in aligned columns without borders, like `kubectl get` (easy to grep). */
export function table(colors: Colors, head: string[], rows: string[][]): string {
  const blank = { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '' };
  const sides = { 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', right: '' };
  const inner = { 'left-mid': '', mid: '', 'mid-mid': '', 'right-mid': '', middle: '  ' };
  const rendered = new Table({
    head: head.map((title) => colors.bold(title)),
    chars: { ...blank, ...sides, ...inner },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  rendered.push(...rows);
  return rendered
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}
