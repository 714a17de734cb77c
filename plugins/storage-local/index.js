// @ts-check
import { Buffer } from 'node:buffer';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, realpath, rm, rmdir, stat } from 'node:fs/promises';
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
  const storageRoot = path.resolve(context.host.storageRoot);
  await mkdir(storageRoot, { recursive: true });
  const folder = relative(context.specifications.folder ?? '');
  const folderLeaves = () => inputError(`setting "folder" leaves the storage root`);
  const realRoot = await realpath(storageRoot);
  await mkdir(await resolveInside(realRoot, folder, folderLeaves), { recursive: true });
  // Resolved again once it exists: mkdir created real folders only, but a link could have been
  // put in its way meanwhile.
  const root = await resolveInside(realRoot, folder, folderLeaves);

  const requested = relative(parameters.path);
  const pathLeaves = () => inputError(`path "${parameters.path}" leaves the storage root`);
  const lexical = path.resolve(root, requested);
  if (!isInside(root, lexical)) throw pathLeaves();
  const shown = path.relative(root, lexical).split(path.sep).join('/') || '.';
  // `delete` removes a link itself, never what it points to; every other operation follows
  // links, and only to places inside the root.
  const file =
    parameters.operation === 'delete' && lexical !== root
      ? path.join(
          await resolveInside(root, path.dirname(requested), pathLeaves),
          path.basename(lexical),
        )
      : await resolveInside(root, requested, pathLeaves);

  switch (parameters.operation) {
    case 'read': {
      const bytes = await readFile(file, { flag: constants.O_RDONLY | noFollow }).catch((error) =>
        rethrow(error, shown),
      );
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
      const mode = parameters.operation === 'write' ? constants.O_TRUNC : constants.O_APPEND;
      // O_NOFOLLOW: a link appearing at the final name after the checks is refused, not followed.
      const handle = await open(
        file,
        constants.O_WRONLY | constants.O_CREAT | mode | noFollow,
      ).catch((error) => rethrow(error, shown));
      try {
        await handle.writeFile(bytes);
        return { path: shown, size: (await handle.stat()).size };
      } finally {
        await handle.close();
      }
    }
    case 'list': {
      const entries = await readdir(file, {
        withFileTypes: true,
        recursive: parameters.recursive,
      }).catch((error) => rethrow(error, shown));
      const listed = await Promise.all(
        entries.map(async (entry) => {
          const full = path.join(entry.parentPath, entry.name);
          const inside = path.relative(file, full).split(path.sep).join('/');
          return {
            name: entry.name,
            path: shown === '.' ? inside : `${shown}/${inside}`,
            type: entry.isDirectory() ? 'directory' : 'file',
            // lstat: a link's own size; what it points to may lie outside the root.
            size: entry.isDirectory() ? 0 : (await lstat(full)).size,
          };
        }),
      );
      listed.sort((a, b) => a.path.localeCompare(b.path));
      return { path: shown, entries: listed };
    }
    case 'delete': {
      if (lexical === root) throw inputError('refusing to delete the storage root');
      const found = await lstat(file).catch(() => undefined);
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

// Not every platform has O_NOFOLLOW (Windows); there the realpath checks alone apply.
const noFollow = constants.O_NOFOLLOW ?? 0;

/**
 * The real path of `requested` under `root` (itself a real path): every link on the way is
 * followed and must end inside the root. For a path that does not exist yet, its nearest existing
 * parent is resolved the same way, and no missing part may be a link (a dangling link would
 * create its target wherever it points).
 * @param {string} root
 * @param {string} requested
 * @param {() => Error} leaves the refusal when it leaves the root
 */
async function resolveInside(root, requested, leaves) {
  const candidate = path.resolve(root, relative(requested));
  if (!isInside(root, candidate)) throw leaves();
  /** @type {string[]} */
  const missing = [];
  for (let existing = candidate; ; existing = path.dirname(existing)) {
    const real = await realpath(existing).catch(() => undefined);
    if (real !== undefined) {
      if (!isInside(root, real)) throw leaves();
      return path.join(real, ...missing.reverse());
    }
    const entry = await lstat(existing).catch(() => undefined);
    if (entry?.isSymbolicLink()) throw leaves();
    if (existing === root) throw leaves();
    missing.push(path.basename(existing));
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
    ELOOP: `"${shown}" became a symbolic link while it was used`,
  });
  const known = error.code ? messages[error.code] : undefined;
  if (known) throw inputError(known);
  throw error;
}
