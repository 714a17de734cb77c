import { readFileSync } from 'node:fs';

/** The CLI package's version (its package.json sits one folder above src/ and dist/ alike). */
export const version = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
