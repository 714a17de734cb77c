/**
 * CPU time a process has used so far (user + system), read from `/proc/<pid>/stat` (Linux): the
 * API benchmark divides it by the requests a round answered, so each side's cost per request is
 * measured in the process that serves it, whatever else the machine was doing meanwhile.
 */
import { readFile } from 'node:fs/promises';

/** Linux's USER_HZ: `/proc` counts CPU time in these ticks on every architecture. */
const ticksPerSecond = 100;

/** Microseconds of CPU the process used so far; NaN where `/proc` is not available. */
export async function processCpuMicros(pid: number): Promise<number> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return Number.NaN;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1e6) / ticksPerSecond;
}

/** The process's resident memory in bytes (`VmRSS` of `/proc/<pid>/status`); 0 where unknown. */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kib === undefined ? 0 : Number(kib) * 1024;
}
