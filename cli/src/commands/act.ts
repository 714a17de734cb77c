import type { Context } from '../context.js';

/**
 * A command's handler: its positional arguments, its options; resolves to the exit code (0 when
 * nothing is returned).
 */
export type Handler<Args extends (string | undefined)[], Options> = (
  context: Context,
  args: Args,
  options: Options,
) => Promise<number | void>;

/** Turns a handler into a commander action. */
export type Act = <Args extends (string | undefined)[] = [], Options = Record<string, never>>(
  handler: Handler<Args, Options>,
) => (...params: unknown[]) => Promise<void>;
