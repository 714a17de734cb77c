import { describe, expect, it } from 'vitest';
import { parseDefinition } from './parse.js';
import {
  checkWorkflowCalls as checkWorkflowCallsProblems,
  workflowCalls,
  type CalledWorkflow,
  type CalledWorkflowLookup,
} from './subworkflows.js';
import type { WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkWorkflowCalls = async (...args: Parameters<typeof checkWorkflowCallsProblems>) =>
  (await checkWorkflowCallsProblems(...args)).map(renderProblem);

const ids = {
  a: '0a000000-0000-4000-8000-000000000000',
  b: '0b000000-0000-4000-8000-000000000000',
  c: '0c000000-0000-4000-8000-000000000000',
  d: '0d000000-0000-4000-8000-000000000000',
};

/** Stored workflows by id, each calling the ids given; and how often each was looked up. */
function stored(graph: Record<string, { name: string; calls: string[] }>) {
  const lookups: string[] = [];
  const lookup: CalledWorkflowLookup = async (id) => {
    lookups.push(id);
    return graph[id] satisfies CalledWorkflow | undefined;
  };
  return { lookup, lookups };
}

const calling = (name: string, ...called: string[]): WorkflowDefinition => ({
  name,
  tasks: called.map((workflow, index) => ({ name: `Call${index}`, workflow })),
});

describe('subworkflow tasks', () => {
  it('lists the calls of a definition, ids lower-cased', () => {
    const definition: WorkflowDefinition = {
      name: 'W',
      tasks: [
        { name: 'Plugin', type: 'config' },
        { name: 'Call', workflow: ids.a.toUpperCase() },
      ],
    };
    expect(workflowCalls(definition)).toEqual([{ index: 1, taskName: 'Call', workflowId: ids.a }]);
  });

  it('keeps inputs to workflow tasks and parameters to plugin tasks', () => {
    const parsed = parseDefinition(
      JSON.stringify({
        name: 'W',
        tasks: [
          { name: 'A', workflow: ids.a, parameters: { x: 1 } },
          { name: 'B', type: 'config', inputs: { x: 1 } },
          { name: 'C', workflow: ids.a, inputs: { x: "$[Outputs('A')]" } },
          { name: 'D', workflow: ids.a, parameters: {} },
          { name: 'E', type: 'config', inputs: {} },
        ],
      }),
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        {
          code: 'validation.invalid',
          path: 'tasks[0].parameters',
          message: 'a task with workflow takes inputs, not parameters',
        },
        {
          code: 'validation.invalid',
          path: 'tasks[1].inputs',
          message: "only a task with workflow takes inputs (a plugin's task takes parameters)",
        },
      ],
    });
  });

  it('names unknown workflows, and on add nothing else', async () => {
    const { lookup } = stored({ [ids.b]: { name: 'B', calls: [ids.a] } });
    expect(await checkWorkflowCalls(calling('A', ids.b, ids.c), undefined, lookup)).toEqual([
      `tasks[1].workflow: task 'Call1' calls workflow ${ids.c}, which does not exist`,
    ]);
  });

  it('names a call of itself and a cycle through others, by workflow names', async () => {
    const { lookup } = stored({
      [ids.a]: { name: 'A', calls: [] },
      [ids.b]: { name: 'B', calls: [ids.c] },
      [ids.c]: { name: 'C', calls: [ids.a] },
    });
    expect(await checkWorkflowCalls(calling('A', ids.a, ids.b), { id: ids.a }, lookup)).toEqual([
      "tasks[0].workflow: task 'Call0' calls its own workflow: A → A",
      "tasks[1].workflow: task 'Call1' closes a cycle of workflows calling each other: A → B → C → A",
    ]);
  });

  it('accepts diamonds, repeated calls and cycles that do not reach the workflow', async () => {
    const { lookup, lookups } = stored({
      [ids.b]: { name: 'B', calls: [ids.d] },
      [ids.c]: { name: 'C', calls: [ids.d, ids.c] },
      [ids.d]: { name: 'D', calls: [ids.c] },
    });
    const definition = calling('A', ids.b, ids.c, ids.b);
    expect(await checkWorkflowCalls(definition, { id: ids.a }, lookup)).toEqual([]);
    // Each stored workflow is read once however often it is reached.
    expect(lookups.sort()).toEqual([ids.b, ids.c, ids.d].sort());
  });
});
