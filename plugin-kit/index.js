// The runtime half of @trellis/plugin-kit (types in index.d.ts). The engine knows an error it
// must not retry by its `nonRetryable: true`, so any error object carrying it works as well.

export class NonRetryableError extends Error {
  /**
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'NonRetryableError';
    /** @type {true} */
    this.nonRetryable = true;
  }
}

/**
 * @param {string} message
 * @param {ErrorOptions} [options]
 */
export function nonRetryable(message, options) {
  return new NonRetryableError(message, options);
}
