import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './failures.js';

export type Inputs = Record<string, unknown>;

/**
 * One `--input key=value` added to the ones before it (commander's repeatable option parser).
 * The value is JSON when it parses as JSON (`3`, `true`, `[1,2]`, `{"a":1}`, `"007"`), else the
 * text as it is (`eu`, `007`).
 */
export function addInput(pair: string, previous: Inputs = {}): Inputs {
  const equals = pair.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('Write it as key=value.');
  const key = pair.slice(0, equals);
  return { ...previous, [key]: jsonOrText(pair.slice(equals + 1)) };
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Reads a file's text; `-` reads standard input. */
export async function readText(file: string): Promise<string> {
  if (file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new UsageError(`Cannot read ${file}: ${reason}`);
    }
  }
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

/**
 * The inputs of a run: those of `--inputs-file` (a JSON object), with each `--input` over them;
 * undefined when neither was given.
 */
export async function runInputs(options: {
  input?: Inputs;
  inputsFile?: string;
}): Promise<Inputs | undefined> {
  if (options.inputsFile === undefined) return options.input;
  const text = await readText(options.inputsFile);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${options.inputsFile} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${options.inputsFile} must hold a JSON object of inputs by name.`);
  }
  return { ...(parsed as Inputs), ...options.input };
}
