import {
  access,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PluginInputError } from '#plugin-host/runner.js';
import { runPluginFolder } from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
let root: string;
let outside: string;
const run = (parameters: Record<string, unknown>, specifications: Record<string, unknown> = {}) =>
  runPluginFolder(folder, { parameters, specifications, host: { storageRoot: root } });

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'trellis-storage-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'trellis-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'top secret');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('Storage/Local', () => {
  it('writes, appends, reads, checks and deletes files under the root', async () => {
    expect(await run({ operation: 'write', path: 'reports/eu.txt', content: 'one' })).toEqual({
      path: 'reports/eu.txt',
      size: 3,
    });
    await run({ operation: 'append', path: '/reports/eu.txt', content: ',two' });
    expect(await readFile(path.join(root, 'reports/eu.txt'), 'utf8')).toBe('one,two');
    expect(await run({ operation: 'read', path: 'reports/eu.txt' })).toEqual({
      path: 'reports/eu.txt',
      size: 7,
      content: 'one,two',
    });
    expect(await run({ operation: 'exists', path: 'reports' })).toEqual({
      path: 'reports',
      exists: true,
      type: 'directory',
    });
    expect(await run({ operation: 'delete', path: 'reports/eu.txt' })).toEqual({
      path: 'reports/eu.txt',
      deleted: true,
    });
    expect(await run({ operation: 'delete', path: 'reports/eu.txt' })).toEqual({
      path: 'reports/eu.txt',
      deleted: false,
    });
    expect(await run({ operation: 'exists', path: 'reports/eu.txt' })).toMatchObject({
      exists: false,
    });
  });

  it('stores JSON values and reads them back parsed, and handles Base64 content', async () => {
    await run({ operation: 'write', path: 'data.json', content: { rows: [1, 2] } });
    expect(await run({ operation: 'read', path: 'data.json', parseJson: true })).toMatchObject({
      content: { rows: [1, 2] },
    });
    await run({ operation: 'write', path: 'bytes.bin', content: 'AAEC/w==', encoding: 'base64' });
    expect([...(await readFile(path.join(root, 'bytes.bin')))]).toEqual([0, 1, 2, 255]);
    expect(await run({ operation: 'read', path: 'bytes.bin', encoding: 'base64' })).toMatchObject({
      content: 'AAEC/w==',
    });
  });

  it('lists a folder, recursively when asked', async () => {
    await run({ operation: 'write', path: 'tree/a.txt', content: 'a' });
    await run({ operation: 'write', path: 'tree/sub/b.txt', content: 'bb' });
    expect(await run({ operation: 'list', path: 'tree' })).toEqual({
      path: 'tree',
      entries: [
        { name: 'a.txt', path: 'tree/a.txt', type: 'file', size: 1 },
        { name: 'sub', path: 'tree/sub', type: 'directory', size: 0 },
      ],
    });
    const deep = (await run({ operation: 'list', path: 'tree', recursive: true })) as {
      entries: { path: string }[];
    };
    expect(deep.entries.map((entry) => entry.path)).toEqual([
      'tree/a.txt',
      'tree/sub',
      'tree/sub/b.txt',
    ]);
  });

  it('deletes a non-empty folder only when recursive', async () => {
    await run({ operation: 'write', path: 'full/x.txt', content: 'x' });
    await expect(run({ operation: 'delete', path: 'full' })).rejects.toThrow(/is not empty/);
    expect(await run({ operation: 'delete', path: 'full', recursive: true })).toMatchObject({
      deleted: true,
    });
  });

  it('refuses paths that leave the root, including through symbolic links', async () => {
    for (const escape of ['../x.txt', 'a/../../x.txt', `../${path.basename(outside)}/secret.txt`]) {
      await expect(run({ operation: 'read', path: escape })).rejects.toThrow(
        new PluginInputError(`path "${escape}" leaves the storage root`),
      );
    }
    await symlink(outside, path.join(root, 'link'));
    await expect(run({ operation: 'read', path: 'link/secret.txt' })).rejects.toThrow(
      /leaves the storage root/,
    );
    await expect(run({ operation: 'write', path: 'link/new.txt', content: 'x' })).rejects.toThrow(
      /leaves the storage root/,
    );
    await expect(run({ operation: 'delete', path: '/' })).rejects.toThrow(
      'refusing to delete the storage root',
    );
  });

  it('refuses links already in the root that lead out, dangling ones included', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
    await expect(run({ operation: 'read', path: 'secret-link' })).rejects.toThrow(
      new PluginInputError('path "secret-link" leaves the storage root'),
    );
    await expect(run({ operation: 'exists', path: 'secret-link' })).rejects.toThrow(
      /leaves the storage root/,
    );
    await expect(
      run({ operation: 'write', path: 'secret-link', content: 'overwritten' }),
    ).rejects.toThrow(/leaves the storage root/);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');

    // A write through a dangling link would create its target outside the root.
    const target = path.join(outside, 'created-by-task.txt');
    await symlink(target, path.join(root, 'dangling'));
    await expect(run({ operation: 'write', path: 'dangling', content: 'x' })).rejects.toThrow(
      /leaves the storage root/,
    );
    await expect(run({ operation: 'append', path: 'dangling', content: 'x' })).rejects.toThrow(
      /leaves the storage root/,
    );
    await symlink(path.join(outside, 'new-folder'), path.join(root, 'dangling-folder'));
    await expect(
      run({ operation: 'write', path: 'dangling-folder/f.txt', content: 'x' }),
    ).rejects.toThrow(/leaves the storage root/);
    await expect(access(target)).rejects.toThrow(/ENOENT/);
    await expect(access(path.join(outside, 'new-folder'))).rejects.toThrow(/ENOENT/);

    // Deleting a link removes the link, never what it points to.
    expect(await run({ operation: 'delete', path: 'secret-link' })).toEqual({
      path: 'secret-link',
      deleted: true,
    });
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('follows links that stay inside the root', async () => {
    await run({ operation: 'write', path: 'real/data.txt', content: 'inside' });
    await symlink(path.join(root, 'real'), path.join(root, 'alias'));
    expect(await run({ operation: 'read', path: 'alias/data.txt' })).toMatchObject({
      path: 'alias/data.txt',
      content: 'inside',
    });
    expect(await run({ operation: 'list', path: 'alias' })).toEqual({
      path: 'alias',
      entries: [{ name: 'data.txt', path: 'alias/data.txt', type: 'file', size: 6 }],
    });
    await run({ operation: 'delete', path: 'alias' });
    expect(await readFile(path.join(root, 'real/data.txt'), 'utf8')).toBe('inside');
  });

  it('refuses a "folder" setting that is, or goes through, a link out of the root', async () => {
    await mkdir(path.join(outside, 'tenant'), { recursive: true });
    await writeFile(path.join(outside, 'tenant', 'theirs.txt'), 'not yours');
    await symlink(path.join(outside, 'tenant'), path.join(root, 'linked-tenant'));
    for (const folderSetting of ['linked-tenant', 'linked-tenant/sub']) {
      for (const parameters of [
        { operation: 'read', path: 'theirs.txt' },
        { operation: 'list', path: '.' },
        { operation: 'write', path: 'mine.txt', content: 'x' },
      ]) {
        await expect(run(parameters, { folder: folderSetting })).rejects.toThrow(
          new PluginInputError('setting "folder" leaves the storage root'),
        );
      }
    }
    await expect(access(path.join(outside, 'tenant', 'mine.txt'))).rejects.toThrow(/ENOENT/);
    await expect(access(path.join(outside, 'tenant', 'sub'))).rejects.toThrow(/ENOENT/);
    expect(await readlink(path.join(root, 'linked-tenant'))).toBe(path.join(outside, 'tenant'));
  });

  it('works inside the configured sub-folder, which cannot leave the root either', async () => {
    await run({ operation: 'write', path: 'f.txt', content: 'x' }, { folder: 'tenant-a' });
    expect(await readFile(path.join(root, 'tenant-a/f.txt'), 'utf8')).toBe('x');
    await expect(run({ operation: 'read', path: 'f.txt' }, { folder: '../..' })).rejects.toThrow(
      'setting "folder" leaves the storage root',
    );
  });

  it('does not let a task choose its own storage root', async () => {
    await expect(run({ operation: 'read', path: 'x', storageRoot: '/' })).rejects.toThrow(
      /parameter "storageRoot" is not allowed/,
    );
    await expect(run({ operation: 'read', path: 'x' }, { storageRoot: '/' })).rejects.toThrow(
      /specification "storageRoot" is not a setting of this plugin/,
    );
  });

  it('reports a missing file as an input error', async () => {
    await expect(run({ operation: 'read', path: 'nope.txt' })).rejects.toThrow(
      new PluginInputError('"nope.txt" does not exist'),
    );
  });
});
