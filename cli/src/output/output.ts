import pc from 'picocolors';

/** ANSI styles, or the identity everywhere when colours are off. */
export type Colors = ReturnType<typeof pc.createColors>;

/** Where the command writes: a stream that may be a terminal. */
export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

export interface Io {
  stdout: Stream;
  stderr: Stream;
}

/**
 * A command's output: for people (lines, tables, colours and live progress on a terminal), or
 * with `--json` for programs (JSON on stdout and nothing else there).
 */
export class Output {
  readonly json: boolean;
  readonly colors: Colors;
  /** stdout is a terminal that can be redrawn in place (and `--json` is off). */
  readonly live: boolean;

  constructor(
    readonly io: Io,
    options: { json?: boolean; color?: boolean } = {},
  ) {
    this.json = options.json === true;
    this.live = !this.json && io.stdout.isTTY === true;
    this.colors = pc.createColors(colorsWanted(io.stdout, options.color));
  }

  /** A line for people on stdout (nothing with `--json`). */
  line(text = ''): void {
    if (!this.json) this.io.stdout.write(`${text}\n`);
  }

  /** The command's result for programs: JSON on stdout (only with `--json`). */
  data(value: unknown): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One JSON value per line, for streams of records (`--json` with `--follow`). */
  record(value: unknown): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A line about the command rather than its result (hints, warnings): stderr. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }
}

/**
 * Colours on a terminal unless `--no-color` or NO_COLOR; FORCE_COLOR turns them on anywhere
 * (the conventions of https://no-color.org and https://force-color.org).
 */
function colorsWanted(stream: Stream, option: boolean | undefined): boolean {
  if (option === false) return false;
  const env = process.env;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}
