/**
 * CPU time a process has used so far (user + system), read from `/proc/<pid>/stat` (Linux): the
 * API benchmark divides it by the requests a round answered, so each side's cost per request is
 * measured in the process that serves it, whatever else the machine was doing meanwhile.
 */
import { readdir, readFile } from 'node:fs/promises';

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

/** One process as `/proc` shows it: what the CPU accounting by part needs. */
interface ProcessEntry {
  pid: number;
  parent: number;
  command: string;
  argv: string[];
  /** CPU used by the process and by its children it has reaped, µs. */
  micros: number;
}

/** Which part of the machine a process tree belongs to: its root matches. */
export type PartMatcher = (process: { pid: number; command: string; argv: string[] }) => boolean;

/**
 * CPU each part of the machine has used so far, µs: every process is counted in the part whose
 * matcher accepts it or its nearest ancestor (a PostgreSQL backend under its postmaster), each
 * process with the children it has reaped (backends that ended), and `other` for the rest. `all`
 * is the machine's busy time from `/proc/stat`, idle and I/O wait left out.
 */
export async function cpuByPart(
  parts: Record<string, PartMatcher>,
): Promise<Record<string, number>> {
  const entries = await processEntries();
  const byPid = new Map(entries.map((entry) => [entry.pid, entry]));
  const totals: Record<string, number> = Object.fromEntries(
    [...Object.keys(parts), 'other'].map((name) => [name, 0]),
  );
  for (const entry of entries) {
    let part = 'other';
    for (let at: ProcessEntry | undefined = entry; at; at = byPid.get(at.parent)) {
      const found = Object.keys(parts).find((name) => parts[name]!(at));
      if (found) {
        part = found;
        break;
      }
      if (at.parent === at.pid) break;
    }
    totals[part]! += entry.micros;
  }
  totals.all = await machineBusyMicros();
  return totals;
}

async function processEntries(): Promise<ProcessEntry[]> {
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((name) =>
    /^\d+$/.test(name),
  );
  const entries = await Promise.all(
    pids.map(async (name): Promise<ProcessEntry | undefined> => {
      const [stat, cmdline] = await Promise.all([
        readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''),
        readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => ''),
      ]);
      if (stat === '') return undefined;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the name: state, ppid, … utime (12th), stime, cutime, cstime.
      const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
      return {
        pid: Number(name),
        parent: Number(fields[1]),
        command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        argv: cmdline.split('\0').filter((arg) => arg !== ''),
        micros: (ticks * 1e6) / ticksPerSecond,
      };
    }),
  );
  return entries.filter((entry) => entry !== undefined);
}

/** The machine's CPU time spent busy so far, all cores, µs. */
async function machineBusyMicros(): Promise<number> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => '');
  const fields = /^cpu\s+(.*)$/m.exec(stat)?.[1]?.split(/\s+/).map(Number);
  if (!fields) return Number.NaN;
  // user nice system idle iowait irq softirq (steal is the host's; guest time is in user).
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return ((user + nice + system + irq + softirq) * 1e6) / ticksPerSecond;
}
