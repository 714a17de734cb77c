import { pino } from 'pino';
import type { TrellisConfig } from './config/types.js';

export type Logger = pino.Logger;

/**
 * Credentials must never reach a log line, whatever object a caller passes in (DESIGN.md §5,
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
 * names rather than numbers, `bindings` on every line.
 */
export function createLogger(
  config: TrellisConfig['Logging'],
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
  return destination ? pino(options, destination) : pino(options);
}
