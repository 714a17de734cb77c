// @ts-check
import { Buffer } from 'node:buffer';
import {
  appendFile,
  mkdir,
  readdir,
  readFile,
  realpath,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';

/**
 * @typedef {{ operation: 'read' | 'write' | 'append' | 'list' | 'delete' | 'exists', path: string,
 *   content?: unknown, encoding: 'utf8' | 'base64', parseJson: boolean, recursive: boolean }} Parameters
 */

/** @param {string} message */
const inputError = (message) => Object.assign(new Error(message), { nonRetryable: true });

/**
 * @param {Parameters} parameters
 * @param {{ host: { storageRoot: string }, specifications: { folder?: string } }} context
 */
export async function execute(parameters, context) {
  const root = path.resolve(
    context.host.storageRoot,
    relative(context.specifications.folder ?? ''),
  );
  if (!isInside(path.resolve(context.host.storageRoot), root)) {
    throw inputError(`setting "folder" leaves the storage root`);
  }
  await mkdir(root, { recursive: true });
  const file = await resolveInside(root, parameters.path);
  const shown = path.relative(root, file).split(path.sep).join('/') || '.';

  switch (parameters.operation) {
    case 'read': {
      const bytes = await readFile(file).catch((error) => rethrow(error, shown));
      const text = bytes.toString(parameters.encoding);
      return {
        path: shown,
        size: bytes.length,
        content: parameters.parseJson ? parseJson(text, shown) : text,
      };
    }
    case 'write':
    case 'append': {
      const bytes = toBytes(parameters.content, parameters.encoding);
      await mkdir(path.dirname(file), { recursive: true });
      const write = parameters.operation === 'write' ? writeFile : appendFile;
      await write(file, bytes).catch((error) => rethrow(error, shown));
      return { path: shown, size: (await stat(file)).size };
    }
    case 'list': {
      const entries = await readdir(file, {
        withFileTypes: true,
        recursive: parameters.recursive,
      }).catch((error) => rethrow(error, shown));
      const listed = await Promise.all(
        entries.map(async (entry) => {
          const full = path.join(entry.parentPath, entry.name);
          return {
            name: entry.name,
            path: path.relative(root, full).split(path.sep).join('/'),
            type: entry.isDirectory() ? 'directory' : 'file',
            size: entry.isDirectory() ? 0 : (await stat(full)).size,
          };
        }),
      );
      listed.sort((a, b) => a.path.localeCompare(b.path));
      return { path: shown, entries: listed };
    }
    case 'delete': {
      if (file === root) throw inputError('refusing to delete the storage root');
      const found = await stat(file).catch(() => undefined);
      if (!found) return { path: shown, deleted: false };
      if (found.isDirectory() && !parameters.recursive) {
        await rmdir(file).catch((error) => rethrow(error, shown));
      } else {
        await rm(file, { recursive: parameters.recursive, force: true });
      }
      return { path: shown, deleted: true };
    }
    case 'exists': {
      const found = await stat(file).catch(() => undefined);
      return {
        path: shown,
        exists: Boolean(found),
        type: found?.isDirectory() ? 'directory' : found ? 'file' : null,
      };
    }
  }
}

/** @param {string} requested */
function relative(requested) {
  return requested.replace(/^[/\\]+/, '');
}

/**
 * @param {string} root
 * @param {string} candidate
 */
function isInside(root, candidate) {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The absolute path of `requested` under `root`, refusing `..` escapes and symbolic links
 * that point outside the root.
 * @param {string} root
 * @param {string} requested
 */
async function resolveInside(root, requested) {
  const candidate = path.resolve(root, relative(requested));
  if (!isInside(root, candidate)) throw inputError(`path "${requested}" leaves the storage root`);
  const realRoot = await realpath(root);
  let existing = candidate;
  for (;;) {
    const real = await realpath(existing).catch(() => undefined);
    if (real !== undefined) {
      if (!isInside(realRoot, real))
        throw inputError(`path "${requested}" leaves the storage root`);
      return candidate;
    }
    existing = path.dirname(existing);
  }
}

/**
 * @param {unknown} content
 * @param {'utf8' | 'base64'} encoding
 */
function toBytes(content, encoding) {
  if (content === undefined) throw inputError('parameter "content" is required to write');
  return typeof content === 'string'
    ? Buffer.from(content, encoding)
    : Buffer.from(JSON.stringify(content), 'utf8');
}

/**
 * @param {string} text
 * @param {string} shown
 */
function parseJson(text, shown) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw inputError(`"${shown}" is not valid JSON: ${/** @type {Error} */ (error).message}`);
  }
}

/**
 * Missing files and wrong kinds are input errors; anything else (disk full...) may pass.
 * @param {NodeJS.ErrnoException} error
 * @param {string} shown
 * @returns {never}
 */
function rethrow(error, shown) {
  const messages = /** @type {Record<string, string>} */ ({
    ENOENT: `"${shown}" does not exist`,
    EISDIR: `"${shown}" is a folder`,
    ENOTDIR: `"${shown}" is not a folder`,
    ENOTEMPTY: `folder "${shown}" is not empty (set recursive to delete it with its content)`,
  });
  const known = error.code ? messages[error.code] : undefined;
  if (known) throw inputError(known);
  throw error;
}
