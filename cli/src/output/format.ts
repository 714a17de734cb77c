import type { ApprovalStatus, ExecutionStatus, TaskStatus } from '../follow/events.js';
import type { Colors } from './output.js';

type Status = ExecutionStatus | TaskStatus | ApprovalStatus;

/** The colour of a status: green done, red failed, cyan going, magenta waiting for a person. */
export function statusColor(colors: Colors, status: Status): (text: string) => string {
  switch (status) {
    case 'Completed':
    case 'Approved':
      return colors.green;
    case 'Failed':
    case 'Rejected':
      return colors.red;
    case 'Running':
      return colors.cyan;
    case 'Retrying':
    case 'Canceled':
      return colors.yellow;
    case 'Paused':
    case 'WaitingForApproval':
      return colors.magenta;
    case 'Pending':
    case 'Skipped':
      return colors.dim;
  }
}

/** A status word in its colour. */
export const styleStatus = (colors: Colors, status: Status): string =>
  statusColor(colors, status)(status);

/** A task's status as one character, for the live view. */
export const taskSymbol: Record<TaskStatus, string> = {
  Pending: '·',
  Running: '▶',
  Retrying: '↻',
  WaitingForApproval: '⏸',
  Completed: '✔',
  Failed: '✖',
  Skipped: '↷',
  Canceled: '⊘',
};

/** An ISO timestamp to the second, still UTC: `2026-11-24 12:00:00Z`; `-` for none. */
export function time(iso: string | null | undefined): string {
  if (!iso) return '-';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** A duration for people: `850ms`, `12.3s`, `4m05s`, `2h03m`. */
export function duration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.max(0, Math.round(milliseconds))}ms`;
  if (milliseconds < 60_000) return `${(milliseconds / 1000).toFixed(1)}s`;
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${pad(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h${pad(Math.floor(seconds / 60) % 60)}m`;
}

/** How long from `start` to `end` (or to now while it runs); `-` without a start. */
export function elapsed(start: string | null | undefined, end?: string | null): string {
  if (!start) return '-';
  const from = Date.parse(start);
  const to = end ? Date.parse(end) : Date.now();
  return Number.isNaN(from) || Number.isNaN(to) ? '-' : duration(to - from);
}

const pad = (value: number) => String(value).padStart(2, '0');

/** A JSON value for people, indented. */
export const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

/** A JSON value on one line when it is short, else indented. */
export function compact(value: unknown): string {
  const line = JSON.stringify(value);
  return line.length <= 80 ? line : pretty(value);
}
