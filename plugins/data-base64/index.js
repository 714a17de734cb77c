// @ts-check
import { Buffer } from 'node:buffer';

/**
 * @param {{ operation: 'encode' | 'decode', input: string, urlSafe: boolean }} parameters
 */
export function execute(parameters) {
  const encoding = parameters.urlSafe ? 'base64url' : 'base64';
  if (parameters.operation === 'encode') {
    return { result: Buffer.from(parameters.input, 'utf8').toString(encoding) };
  }
  const pattern = parameters.urlSafe ? /^[A-Za-z0-9_-]*$/ : /^[A-Za-z0-9+/]*={0,2}$/;
  const compact = parameters.input.replace(/\s+/g, '');
  if (!pattern.test(compact)) {
    throw Object.assign(
      new Error(`input is not valid ${parameters.urlSafe ? 'URL-safe ' : ''}Base64`),
      {
        nonRetryable: true,
      },
    );
  }
  return { result: Buffer.from(compact, encoding).toString('utf8') };
}
