// The implementation of `@link` (declared in links.tsp). TypeSpec loads decorators from
// JavaScript, so this file of the contract is not TypeSpec.
import { getOperationId, setExtension } from '@typespec/openapi';

const linksKey = Symbol.for('Trellis.links');

/**
 * Records an OpenAPI link from the target operation's success response to the operation `to`.
 *
 * @param {import('@typespec/compiler').DecoratorContext} context
 * @param {import('@typespec/compiler').Operation} target
 * @param {import('@typespec/compiler').Operation} to
 * @param {Record<string, string>} parameters
 * @param {string} [requestBody]
 */
function $link(context, target, to, parameters, requestBody) {
  const state = context.program.stateMap(linksKey);
  state.set(target, [...(state.get(target) ?? []), { to, parameters, requestBody }]);
}

/**
 * Writes each operation's links as its `x-links` extension once every decorator has run (the
 * `@operationId` of the operation a link names may not have run when the `@link` does).
 * `scripts/contract/finalize-openapi.ts` moves them to the operation's 200 response, where OpenAPI puts
 * links, and checks every name in them against the document.
 *
 * @param {import('@typespec/compiler').Program} program
 */
export function $onValidate(program) {
  for (const [operation, links] of program.stateMap(linksKey)) {
    const extension = {};
    // Decorators run from the bottom up: reversed, the links read in the order they are written.
    for (const { to, parameters, requestBody } of [...links].reverse()) {
      const operationId = getOperationId(program, to) ?? to.name;
      extension[operationId] = {
        operationId,
        parameters,
        ...(requestBody === undefined ? {} : { requestBody }),
      };
    }
    setExtension(program, operation, 'x-links', extension);
  }
}

export const $decorators = { Trellis: { link: $link } };
