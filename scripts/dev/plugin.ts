/**
 * The plugin author's command (`npm run plugin -- <command>`): packs plugin folders into the
 * deterministic, checksummed tarballs Trellis installs, and publishes them to a registry folder,
 * exactly as Trellis reads them (core/src/plugin-host/package.ts and registry.ts).
 *
 *   npm run plugin -- pack <folder>... [--out <dir>]    # <group>-<name>-<version>.tgz in <dir> (default .)
 *   npm run plugin -- pack <folder>... --registry <dir> # into <dir>, adding them to <dir>/index.json
 *
 * Each folder's plugin.json and entry module are checked first; a problem stops the command
 * (exit 1) before anything is written. The same folder always gives the same bytes and sha256.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { TrellisError } from '#definition/errors.js';
import { packFolder, readPackageFolder, sha256Hex } from '#plugin-host/package.js';
import { buildRegistry, REGISTRY_INDEX_FILE, tarballName } from '#plugin-host/registry.js';

const usage = `usage: npm run plugin -- pack <folder>... [--out <dir> | --registry <dir>]

  pack    packs each plugin folder (plugin.json and its module) into a deterministic gzip'd
          tarball <group>-<name>-<version>.tgz and prints its sha256
          --out <dir>       where to write the tarballs (default: the current folder)
          --registry <dir>  write them into a registry folder and add them to its index.json
                            (an entry of the same type and version is replaced); point
                            Plugins.Registry at <dir> to install from it`;

async function pack(folders: string[], options: { out?: string; registry?: string }) {
  // Every folder is checked before anything is written.
  const manifests = await Promise.all(folders.map((folder) => readPackageFolder(folder)));
  if (options.registry !== undefined) {
    const index = await buildRegistry(options.registry, folders);
    for (const manifest of manifests) {
      const entry = index.plugins.find(
        (e) => e.type === manifest.type && e.version === manifest.version,
      )!;
      console.log(`${entry.type} ${entry.version}: ${entry.tarball} sha256 ${entry.sha256}`);
    }
    console.log(
      `registry ${path.join(options.registry, REGISTRY_INDEX_FILE)}: ${index.plugins.length} package(s)`,
    );
    return;
  }
  const out = options.out ?? '.';
  await mkdir(out, { recursive: true });
  for (const [i, folder] of folders.entries()) {
    const manifest = manifests[i]!;
    const bytes = await packFolder(folder);
    const file = path.join(out, tarballName(manifest));
    await writeFile(file, bytes);
    console.log(`${manifest.type} ${manifest.version}: ${file} sha256 ${sha256Hex(bytes)}`);
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: 'string' },
        registry: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command, ...folders] = positionals;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (command !== 'pack' || folders.length === 0) {
    console.error(usage);
    return 2;
  }
  if (values.out !== undefined && values.registry !== undefined) {
    console.error(`Give --out or --registry, not both.\n\n${usage}`);
    return 2;
  }
  // `npm run` starts scripts in the repository's root; paths are meant from where it was typed.
  const from = (where: string) => path.resolve(process.env.INIT_CWD ?? process.cwd(), where);
  try {
    await pack(folders.map(from), {
      ...(values.out === undefined ? {} : { out: from(values.out) }),
      ...(values.registry === undefined ? {} : { registry: from(values.registry) }),
    });
    return 0;
  } catch (error) {
    if (!(error instanceof TrellisError)) throw error;
    for (const message of error.messages) console.error(message);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
