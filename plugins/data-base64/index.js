// @ts-check
import { Buffer } from 'node:buffer';
import { NonRetryableError } from '@trellis/plugin-kit';

/** @typedef {{ operation: 'encode' | 'decode', input: string, urlSafe: boolean }} Parameters */

/** @type {import('@trellis/plugin-kit').PluginExecute<Parameters>} */
export function execute(parameters) {
  const encoding = parameters.urlSafe ? 'base64url' : 'base64';
  if (parameters.operation === 'encode') {
    return { result: Buffer.from(parameters.input, 'utf8').toString(encoding) };
  }
  const pattern = parameters.urlSafe ? /^[A-Za-z0-9_-]*$/ : /^[A-Za-z0-9+/]*={0,2}$/;
  const compact = parameters.input.replace(/\s+/g, '');
  if (!pattern.test(compact)) {
    throw new NonRetryableError(
      `input is not valid ${parameters.urlSafe ? 'URL-safe ' : ''}Base64`,
    );
  }
  return { result: Buffer.from(compact, encoding).toString('utf8') };
}
