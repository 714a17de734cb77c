import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The TCP ports the child processes of this one (and theirs) listen on, read from Linux's /proc:
 * the embedded Temporal dev server's every port (gRPC, HTTP API, UI, metrics, and its internal
 * history, matching and worker services, on ports it picks itself), plugin sandboxes. Empty where
 * there is no /proc. This process's own sockets are not read here: Trellis knows each one it
 * opens, and a test harness running Trellis in-process listens beside it.
 */
export async function descendantListeningPorts(root = process.pid): Promise<number[]> {
  const listening = await listeningSocketPorts().catch(() => new Map<string, number>());
  if (listening.size === 0) return [];
  const ports = new Set<number>();
  for (const pid of await descendants(root)) {
    for (const inode of await socketInodes(pid)) {
      const port = listening.get(inode);
      if (port !== undefined) ports.add(port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** Listening TCP sockets of this network namespace, as port by socket inode. */
async function listeningSocketPorts(): Promise<Map<string, number>> {
  const ports = new Map<string, number>();
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    // `sl local_address rem_address st ... inode`: local is ADDRESS:PORT in hex, 0A is LISTEN.
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A' || fields[9] === undefined) continue;
      const port = Number.parseInt(fields[1]!.split(':').at(-1)!, 16);
      ports.set(fields[9], port);
    }
  }
  return ports;
}

/** Every process below `root`, by parent id (read from each /proc/<pid>/stat). */
async function descendants(root: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  const entries = await readdir('/proc').catch(() => []);
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (!Number.isInteger(parent)) return;
        children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
      }),
  );
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** The inodes of the sockets a process holds open; none once it is gone. */
async function socketInodes(pid: number): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  const targets = await Promise.all(
    fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')),
  );
  return targets.flatMap((target) => /^socket:\[(\d+)\]$/.exec(target)?.[1] ?? []);
}
