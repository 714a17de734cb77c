/**
 * The definition files of a folder, as `trellis apply` and `trellis test` read them: every
 * `.json` file, one workflow each.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { TrellisApiError } from '@trellis/sdk';
import { CliError } from './failures.js';

/** The definition files of a folder, by name: every `.json` file, in name order. */
export async function definitionFiles(folder: string): Promise<{ file: string; text: string }[]> {
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: unknown) => {
    throw new CliError(
      `Cannot read the folder ${folder}: ${error instanceof Error ? error.message : String(error)}.`,
    );
  });
  const names = entries
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.json') && !entry.name.startsWith('.'),
    )
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (file) => ({ file, text: await readFile(path.join(folder, file), 'utf8') })),
  );
}

/** The server's refusal of one file's definition (`body.definition`) told as that file. */
export function toldAsFile(error: unknown, file: string): unknown {
  if (!(error instanceof TrellisApiError)) return error;
  return new TrellisApiError(
    error.status,
    error.messages.map((text) => text.replace(/body\.definition/g, file)),
    error.body,
    error.retryAfterSeconds,
  );
}
