import { pino } from 'pino';
import pinoPretty from 'pino-pretty';
import type { TrellisConfig } from './config/types.js';

export type Logger = pino.Logger;

/**
 * Credentials never reach a log line, whatever object a caller passes (docs/ARCHITECTURE.md#auth,
 * request logs "never credentials").
 */
const redactPaths = [
  'password',
  'Password',
  'secret',
  'Secret',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.Password',
  '*.secret',
  '*.Secret',
  '*.authorization',
  '*.headers.authorization',
];

/**
 * Structured JSON logs on stdout (or `destination`, e.g. in tests): ISO timestamps, level
 * names rather than numbers, `bindings` on every line. With `Format: pretty`, or `auto` when
 * stdout is a terminal, the same records print as readable lines for a person (pino-pretty):
 * time, level, message, then the fields.
 */
export function createLogger(
  config: Pick<TrellisConfig['Logging'], 'Level'> & Partial<TrellisConfig['Logging']>,
  bindings: Record<string, unknown> = {},
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level: config.Level,
    base: { pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: redactPaths, censor: '[redacted]' },
  };
  const format = config.Format ?? 'auto';
  const pretty =
    format === 'pretty' || (format === 'auto' && !destination && process.stdout.isTTY === true);
  if (!pretty) return destination ? pino(options, destination) : pino(options);
  return pino(
    options,
    pinoPretty({
      destination: destination ?? 1,
      colorize: !destination && process.stdout.isTTY === true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,role',
      // Levels are names here (see `formatters.level`), which pino-pretty reads as such.
      customLevels: 'trace:10,debug:20,info:30,warn:40,error:50,fatal:60',
      useOnlyCustomProps: false,
      singleLine: true,
    }),
  );
}
