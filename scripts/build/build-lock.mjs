// A lock between processes that build the same files (two test files, two `npm start`s): one
// builds while the others wait, then find the build current.
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A build takes a minute or two; a lock older than this was left by a process that died. */
const abandonedLockMs = 10 * 60 * 1000;

/**
 * Takes the lock `lockFolder` (a folder: creating one is atomic), waiting while another live
 * process holds it; resolves to the function that releases it.
 */
export async function lockBuild(lockFolder) {
  await mkdir(path.dirname(lockFolder), { recursive: true });
  for (;;) {
    try {
      await mkdir(lockFolder);
      await writeFile(path.join(lockFolder, 'pid'), String(process.pid));
      return () => rm(lockFolder, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (await isAbandoned(lockFolder)) {
      await rm(lockFolder, { recursive: true, force: true });
      continue;
    }
    await sleep(250);
  }
}

async function isAbandoned(lockFolder) {
  const info = await stat(lockFolder).catch(() => null);
  if (!info) return false;
  if (Date.now() - info.mtimeMs > abandonedLockMs) return true;
  const pid = Number(await readFile(path.join(lockFolder, 'pid'), 'utf8').catch(() => ''));
  if (!pid) return false; // just created: its holder writes the pid next
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}
