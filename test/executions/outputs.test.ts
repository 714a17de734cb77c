import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { definition, executionLogs, noop, run, tasksOf } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

async function taskDetail(workflowId: string, executionId: string, taskExecutionId: string) {
  return trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
    { params: { path: { workflowId, executionId, taskExecutionId } } },
  );
}

describe('outputs of tasks and of runs', () => {
  it("shows each task's output and the run's outputs, evaluated when it completes", async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          { name: 'Start', type: noop, parameters: { values: [1, 2, 3], label: 'sum' } },
          {
            name: 'Sum',
            type: { plugin: 'Data/Json' },
            dependencies: ['Start'],
            parameters: { expression: '$sum(values)', input: "$[Outputs('Start')]" },
          },
          {
            name: 'Never',
            type: noop,
            dependencies: ['Sum'],
            executionCondition: { expression: 'false' },
          },
        ],
        {
          variables: { unit: 'items' },
          outputs: {
            total: "Outputs('Sum').result * 10",
            text: "$[Outputs('Start').label] = $[Outputs('Sum').result] $[Variables('unit')]",
            skipped: "Outputs('Never')",
          },
        },
      ),
    );
    expect(execution.status).toBe('Completed');
    expect(execution.outputs).toEqual({ total: 60, text: 'sum = 6 items', skipped: null });

    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect((await taskDetail(workflowId, executionId, tasks.Start!.id)).output).toEqual({
      values: [1, 2, 3],
      label: 'sum',
    });
    expect((await taskDetail(workflowId, executionId, tasks.Sum!.id)).output).toEqual({
      result: 6,
    });
    const never = await taskDetail(workflowId, executionId, tasks.Never!.id);
    expect(never.status).toBe('Skipped');
    expect(never.output).toBeNull();
  });

  it('fails the run, naming the output, when an output cannot be evaluated', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'A', type: noop, parameters: { text: 'x' } }], {
        outputs: { fine: "Outputs('A').text", broken: "Outputs('A').text - 1" },
      }),
    );
    expect(execution.status).toBe('Failed');
    expect(execution.outputs).toBeNull();
    const logs = await executionLogs(trellis.admin, workflowId, executionId);
    expect(logs.at(-1)).toBe(
      "Execution failed: Output 'broken' could not be evaluated: operator - needs numbers, not the string \"x\" and the number 1 in $[Outputs('A').text - 1]",
    );
    // The task itself completed; only the run's outputs failed.
    const { A } = await tasksOf(trellis.admin, workflowId, executionId);
    expect(A!.status).toBe('Completed');
  });

  it('gives no output for a failed task and no outputs for a failed run', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [{ name: 'Broken', type: { plugin: 'Data/Json' }, parameters: { expression: 'x[' } }],
        { outputs: { result: "Outputs('Broken')" } },
      ),
    );
    expect(execution.status).toBe('Failed');
    expect(execution.outputs).toBeNull();
    const { Broken } = await tasksOf(trellis.admin, workflowId, executionId);
    const detail = await taskDetail(workflowId, executionId, Broken!.id);
    expect(detail).toMatchObject({ status: 'Failed', output: null });
  });
});
