/** The `--key=value` arguments the benchmark passes to a baseline process. */
import { parseArgs } from 'node:util';

/** Reads the named string options; each is required. */
export function requiredArguments<K extends string>(names: readonly K[]): Record<K, string> {
  const { values } = parseArgs({
    options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
    strict: true,
  });
  const read = values as Record<string, string | undefined>;
  const missing = names.filter((name) => read[name] === undefined);
  if (missing.length > 0)
    throw new Error(`Missing arguments: ${missing.map((n) => `--${n}`).join(' ')}`);
  return read as Record<K, string>;
}

/** Tells the benchmark the process is ready (one line it waits for), with what it needs to know. */
export function announceReady(details: Record<string, string>): void {
  process.stdout.write(`ready ${JSON.stringify(details)}\n`);
}

/** Runs `stop` on SIGTERM/SIGINT, then exits. */
export function stopOnSignal(stop: () => Promise<void>): void {
  const handler = () => {
    void stop().finally(() => process.exit(0));
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
