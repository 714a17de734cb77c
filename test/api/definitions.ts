/** Workflow definitions for the API tests, as the JSON text a client sends. */

/** A valid two-task definition on built-in plugins. */
export function simpleDefinition(name: string): string {
  return JSON.stringify({
    name,
    description: 'Two no-op tasks in a row',
    tasks: [
      { name: 'first', type: { plugin: 'Flow/NoOp', version: '1.0.0' } },
      { name: 'second', type: { plugin: 'Flow/NoOp' }, dependencies: ['first'] },
    ],
  });
}
