// @ts-check
import { Buffer } from 'node:buffer';
import { createHash, createHmac } from 'node:crypto';

/**
 * @typedef {'utf8' | 'base64'} InputEncoding
 * @param {{ input: string, inputEncoding: InputEncoding, algorithm: string, hmac: boolean,
 *   key?: string, keyEncoding: InputEncoding, outputEncoding: 'hex' | 'base64' }} parameters
 * @param {{ specifications: { hmacKey?: string } }} context
 */
export function execute(parameters, context) {
  const input = Buffer.from(parameters.input, parameters.inputEncoding);
  const wantHmac = parameters.hmac || parameters.key !== undefined;
  const key = parameters.key ?? context.specifications.hmacKey;
  if (wantHmac && key === undefined) {
    throw Object.assign(
      new Error('HMAC needs a key: set the `key` parameter or the `hmacKey` setting'),
      {
        nonRetryable: true,
      },
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
