import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimFolder, olderThan, removeStaleFolders } from './leftovers.js';
import { removeStaleStaging } from '#plugin-host/package.js';

const parents: string[] = [];
afterEach(async () => {
  for (const parent of parents.splice(0)) await rm(parent, { recursive: true, force: true });
});

async function parentWith(names: string[], files: string[] = []): Promise<string> {
  const parent = await mkdtemp(path.join(tmpdir(), 'trellis-leftovers-'));
  parents.push(parent);
  for (const name of names) await mkdir(path.join(parent, name));
  for (const name of files) await writeFile(path.join(parent, name), '');
  return parent;
}

/** The id of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid;
}

const pattern = {
  name: /^left-(?:(?<owner>\d+)-)?[a-z]+$/,
  unownedIsStale: (folder: string) => Promise.resolve(folder.endsWith('-old')),
};

describe('removeStaleFolders', () => {
  it("removes the folders of dead processes and keeps live processes' folders", async () => {
    const dead = deadPid();
    const parent = await parentWith(
      [
        `left-${dead}-abc`,
        `left-${process.ppid}-abc`, // the test runner's parent: alive
        `left-${process.pid}-mine`, // this process's, claimed below
        `left-${process.pid}-earlier`, // this pid, not in use: an earlier run's
        'left-old', // no owner: asks unownedIsStale
        'left-new',
        'other-1-abc',
      ],
      [`left-${dead}-file`],
    );
    const release = claimFolder(path.join(parent, `left-${process.pid}-mine`));
    try {
      const removed = await removeStaleFolders(parent, pattern);
      expect(removed.map((folder) => path.basename(folder)).sort()).toEqual(
        [`left-${dead}-abc`, `left-${process.pid}-earlier`, 'left-old'].sort(),
      );
      expect((await readdir(parent)).sort()).toEqual(
        [
          `left-${process.ppid}-abc`,
          `left-${process.pid}-mine`,
          'left-new',
          'other-1-abc',
          `left-${dead}-file`,
        ].sort(),
      );
    } finally {
      release();
    }
  });

  it('answers nothing for a parent that does not exist', async () => {
    expect(
      await removeStaleFolders(path.join(tmpdir(), 'trellis-no-such-folder'), pattern),
    ).toEqual([]);
  });

  it("removes a plugin cache's staging folders of dead processes, and old ones without a pid", async () => {
    const sha = 'a'.repeat(64);
    const uuid = '0b4f9f0e-8a51-4a55-9d6e-3f9a1b2c3d4e';
    const dead = deadPid();
    const parent = await parentWith([
      sha,
      `${sha}.tmp-${dead}-${uuid}`,
      `${sha}.tmp-${process.ppid}-${uuid}`,
      `${sha}.tmp-${uuid}`,
      `${'b'.repeat(64)}.tmp-${uuid}`,
    ]);
    const hourAgo = new Date(Date.now() - 60 * 60 * 1000);
    await utimes(path.join(parent, `${sha}.tmp-${uuid}`), hourAgo, hourAgo);
    expect(await olderThan(path.join(parent, `${sha}.tmp-${uuid}`), 10 * 60 * 1000)).toBe(true);

    await removeStaleStaging(parent);
    expect((await readdir(parent)).sort()).toEqual(
      [sha, `${sha}.tmp-${process.ppid}-${uuid}`, `${'b'.repeat(64)}.tmp-${uuid}`].sort(),
    );
  });
});
