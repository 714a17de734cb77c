/**
 * Reads README.md's shell blocks as a reader pastes them: each block split into commands, each
 * command with the result the README shows for it, and a matcher saying whether an output is
 * that result. The rules are listed in readme-blocks.test.ts.
 */

/** A fenced block under the headings that enclose it. */
export interface Block {
  language: string;
  /** The enclosing headings, outermost first (`Triggers, webhooks and revisions`, `Webhooks`). */
  headings: string[];
  /** The line of README.md the block's first line is on (1-based). */
  line: number;
  lines: string[];
  /** The reason of a `<!-- readme-test: skip, <reason> -->` just before the fence. */
  skipped?: string;
}

/** One command of a block: one or more lines that bash runs as one. */
export interface Command {
  block: Block;
  text: string;
  /** The README's line of its first line. */
  line: number;
  /** The result the README shows for it, as written. */
  expected?: string;
  /** Marked `# in another terminal`: it runs beside the commands that follow it. */
  background: boolean;
}

const fence = /^\s*```(\S*)\s*$/;
const heading = /^(#{1,6})\s+(.*?)\s*$/;
const skipMarker = /^<!--\s*readme-test:\s*skip,\s*(.*?)\s*-->$/;
export const backgroundMarker = 'in another terminal';

export function readBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const headings: string[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const title = heading.exec(line);
    if (title) {
      const level = title[1]!.length;
      headings.splice(level - 1, headings.length, title[2]!);
      continue;
    }
    const opening = fence.exec(line);
    if (!opening) continue;
    const start = index + 1;
    while (index + 1 < lines.length && !fence.test(lines[index + 1] ?? '')) index++;
    const skipped = skipMarker.exec(lines[start - 2]?.trim() ?? '')?.[1];
    blocks.push({
      language: opening[1] ?? '',
      headings: headings.filter(Boolean),
      line: start + 1,
      lines: lines.slice(start, index + 1),
      ...(skipped === undefined ? {} : { skipped }),
    });
    index++;
  }
  return blocks;
}

/** Where a line leaves bash's quoting, and the comment it ends with (outside any quote). */
interface LineScan {
  open: boolean;
  comment?: string;
  code: string;
}

/**
 * Follows quotes and `$( )` across lines, as bash does, far enough to tell where a command ends
 * and which `#` starts a comment.
 */
class ShellScanner {
  private readonly stack: ('single' | 'double' | 'substitution')[] = [];

  scan(line: string): LineScan {
    for (let at = 0; at < line.length; at++) {
      const char = line[at]!;
      const inside = this.stack.at(-1);
      if (inside === 'single') {
        if (char === "'") this.stack.pop();
      } else if (char === '\\') {
        at++;
      } else if (line.startsWith('$(', at)) {
        this.stack.push('substitution');
        at++;
      } else if (inside === 'double') {
        if (char === '"') this.stack.pop();
      } else if (char === "'") this.stack.push('single');
      else if (char === '"') this.stack.push('double');
      else if (char === ')' && inside === 'substitution') this.stack.pop();
      else if (char === '#' && (at === 0 || /[\s;]/.test(line[at - 1]!))) {
        return {
          open: this.stack.length > 0,
          comment: line.slice(at + 1).trim(),
          code: line.slice(0, at),
        };
      }
    }
    return { open: this.stack.length > 0, code: line };
  }
}

/** A comment that shows a result: it starts as a JSON value does. */
const showsResult = (comment: string) => /^[[{"\d-]|^(true|false|null)\b/.test(comment);

export function readCommands(block: Block): Command[] {
  const commands: Command[] = [];
  const scanner = new ShellScanner();
  let current: { lines: string[]; line: number; comment?: string } | undefined;
  /** The command a run of comment lines right after it may show the result of. */
  let shown: Command | undefined;
  block.lines.forEach((line, index) => {
    if (!current) {
      if (line.trim() === '') {
        shown = undefined;
        return;
      }
      const comment = /^\s*#(.*)$/.exec(line)?.[1]?.trim();
      if (comment !== undefined) {
        // `#  more` (two spaces) goes on with the line before; another line is another value.
        const continued = /^\s*#\s{2}/.test(line);
        if (shown && (showsResult(comment) || (continued && shown.expected !== undefined))) {
          shown.expected =
            shown.expected === undefined
              ? comment
              : `${shown.expected}${continued ? ' ' : '\n'}${comment}`;
        } else shown = undefined;
        return;
      }
      current = { lines: [], line: block.line + index };
    }
    current.lines.push(line);
    const scan = scanner.scan(line);
    const code = scan.code.trimEnd();
    if (scan.open || /(\\|\||&&)$/.test(code)) return;
    const trailing = scan.comment;
    const command: Command = {
      block,
      text: current.lines.join('\n'),
      line: current.line,
      background: trailing === backgroundMarker,
      ...(trailing !== undefined && showsResult(trailing) ? { expected: trailing } : {}),
    };
    commands.push(command);
    shown = command.expected === undefined && !command.background ? command : undefined;
    current = undefined;
  });
  if (current) throw new Error(`README.md:${current.line}: a command that never ends`);
  return commands;
}

/** Stands for "and more" in a shown result: `{"status": "Completed", ...}`. */
const more = Symbol('more');
type Shown = unknown;

/**
 * Parses a shown result, or an output, as a sequence of JSON values. A shown result may leave
 * things out: `...` as a member or an element (the rest is not shown), `...` inside a string
 * (any text there). Undefined when the text is not JSON.
 */
export function parseValues(text: string): Shown[] | undefined {
  let at = 0;
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const fail = (): never => {
    throw new SyntaxError(`not JSON at ${at}`);
  };
  const expect = (char: string) => (text[at] === char ? at++ : fail());
  const string = (): string => {
    const match = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(at)) ?? fail();
    at += match[0].length;
    return JSON.parse(match[0]) as string;
  };
  const value = (): Shown => {
    space();
    if (text.startsWith('...', at)) return ((at += 3), more);
    const char = text[at];
    if (char === '"') return string();
    if (char === '{' || char === '[') {
      const object = char === '{';
      const members: Record<string | symbol, Shown> = {};
      const elements: Shown[] = [];
      at++;
      space();
      if (text[at] === (object ? '}' : ']')) return (at++, object ? members : elements);
      for (;;) {
        space();
        if (text.startsWith('...', at)) {
          at += 3;
          (object ? members : (elements as unknown as Record<symbol, boolean>))[more] = true;
        } else if (object) {
          const key = string();
          space();
          expect(':');
          members[key] = value();
        } else elements.push(value());
        space();
        if (text[at] === ',') at++;
        else return (expect(object ? '}' : ']'), object ? members : elements);
      }
    }
    const literal =
      /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at)) ?? fail();
    at += literal[0].length;
    return JSON.parse(literal[0]) as Shown;
  };
  try {
    const values: Shown[] = [];
    for (space(); at < text.length; space()) values.push(value());
    return values.length > 0 ? values : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `actual` is what `shown` shows (with what it leaves out, see parseValues). */
export function matches(shown: Shown, actual: unknown): boolean {
  if (typeof shown === 'string' && shown.includes('...')) {
    const pattern = shown.split('...').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return typeof actual === 'string' && new RegExp(`^${pattern.join('.*')}$`, 's').test(actual);
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return false;
    const partial = (shown as unknown as Record<symbol, boolean>)[more] === true;
    if (partial ? actual.length < shown.length : actual.length !== shown.length) return false;
    return shown.every((element, index) => matches(element, actual[index]));
  }
  if (typeof shown === 'object' && shown !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const members = shown as Record<string | symbol, Shown>;
    const keys = Object.keys(members);
    if (members[more] !== true && Object.keys(actual).length !== keys.length) return false;
    return keys.every(
      (key) => key in actual && matches(members[key], (actual as Record<string, unknown>)[key]),
    );
  }
  return shown === actual;
}

/** Whether a command's output is the result shown: as JSON where both parse, else as text. */
export function outputShows(expected: string, output: string): boolean {
  const shown = parseValues(expected);
  const actual = parseValues(output);
  if (shown && actual) {
    return (
      shown.length === actual.length && shown.every((value, index) => matches(value, actual[index]))
    );
  }
  const words = (text: string) => text.trim().split(/\s+/).join(' ');
  return words(expected) === words(output);
}
