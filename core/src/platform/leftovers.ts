/**
 * Folders a process makes for its own use and removes when it stops (the embedded database's
 * socket folder, a plugin package being unpacked) stay behind when it is killed. Such a folder
 * carries its owner's process id in its name, so that the next start can tell the folders of a
 * dead process from those of a live one and remove only the former.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** Whether a process with this id runs on this machine (one we may not signal counts as running). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folders this process made and still uses, by full path: never stale, whatever its id. */
const ownFolders = new Set<string>();

/** Marks a folder as this process's while it is in use (see `removeStaleFolders`). */
export function claimFolder(folder: string): () => void {
  ownFolders.add(folder);
  return () => ownFolders.delete(folder);
}

export interface LeftoverPattern {
  /** Matches the folders of this kind; its `owner` group, when matched, is the owner's pid. */
  name: RegExp;
  /** Whether a folder without an owner in its name (an earlier Trellis version's) is stale. */
  unownedIsStale: (folder: string) => Promise<boolean>;
}

/**
 * Removes the folders in `parent` matching `pattern` whose owner process is gone: a pid in the
 * name that no longer runs (or this process's own pid, for a folder it does not use: an earlier
 * run with the same pid, as PID 1 in a container), or no pid and `unownedIsStale`.
 * Returns the folders removed; a folder that cannot be removed (another user's) is left alone.
 */
export async function removeStaleFolders(
  parent: string,
  pattern: LeftoverPattern,
): Promise<string[]> {
  const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
  const removed: string[] = [];
  for (const entry of entries) {
    const match = pattern.name.exec(entry.name);
    if (!entry.isDirectory() || match === null) continue;
    const folder = path.join(parent, entry.name);
    if (ownFolders.has(folder)) continue;
    const owner = match.groups?.owner;
    const stale =
      owner !== undefined
        ? Number(owner) === process.pid || !isProcessAlive(Number(owner))
        : await pattern.unownedIsStale(folder);
    if (!stale) continue;
    try {
      await rm(folder, { recursive: true, force: true });
      removed.push(folder);
    } catch {
      // Not ours to remove (another user's temporary folder): leave it.
    }
  }
  return removed;
}

/** Whether a folder was last changed more than `milliseconds` ago. */
export async function olderThan(folder: string, milliseconds: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(folder)).mtimeMs > milliseconds;
  } catch {
    return false;
  }
}
