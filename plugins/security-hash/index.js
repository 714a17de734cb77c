// @ts-check
import { Buffer } from 'node:buffer';
import { createHash, createHmac } from 'node:crypto';
import { NonRetryableError } from '@trellis/plugin-kit';

/**
 * @typedef {'utf8' | 'base64'} InputEncoding
 * @typedef {{ input: string, inputEncoding: InputEncoding, algorithm: string, hmac: boolean,
 *   key?: string, keyEncoding: InputEncoding, outputEncoding: 'hex' | 'base64' }} Parameters
 */

/** @type {import('@trellis/plugin-kit').PluginExecute<Parameters, { hmacKey?: string }>} */
export function execute(parameters, context) {
  const input = Buffer.from(parameters.input, parameters.inputEncoding);
  const wantHmac = parameters.hmac || parameters.key !== undefined;
  const key = parameters.key ?? context.specifications.hmacKey;
  if (wantHmac && key === undefined) {
    throw new NonRetryableError(
      'HMAC needs a key: set the `key` parameter or the `hmacKey` setting',
    );
  }
  const hash =
    wantHmac && key !== undefined
      ? createHmac(parameters.algorithm, Buffer.from(key, parameters.keyEncoding))
      : createHash(parameters.algorithm);
  return {
    algorithm: parameters.algorithm,
    hmac: wantHmac,
    encoding: parameters.outputEncoding,
    digest: hash.update(input).digest(parameters.outputEncoding),
  };
}
