import { describe, expect, it } from 'vitest';
import { checkApprovalReads as checkApprovalReadsProblems } from './approval-reads.js';
import { checkExpression } from './expressions/check.js';
import { evaluateExpression, resolveValue } from './expressions/evaluate.js';
import { referencedApprovals } from './expressions/references.js';
import type { WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkApprovalReads = (...args: Parameters<typeof checkApprovalReadsProblems>) =>
  checkApprovalReadsProblems(...args).map(renderProblem);

const flowLog = { plugin: 'Flow/Log' };

describe('Approval() in expressions', () => {
  const scope = {
    outputs: {},
    variables: {},
    approvals: { Gate: { decidedBy: 'alice', inputs: { amount: 5 } } },
    approval: { inputs: { amount: 7 } },
  };

  it('reads a named task’s decision and the task’s own', () => {
    expect(evaluateExpression("Approval('Gate').inputs.amount", scope)).toBe(5);
    expect(evaluateExpression('Approval().inputs.amount', scope)).toBe(7);
    expect(evaluateExpression("approval('Gate').decidedBy", scope)).toBe('alice');
    expect(resolveValue("by $[Approval('Gate').decidedBy]", scope)).toBe('by alice');
    expect(evaluateExpression("Approval('Other')", scope)).toBeNull();
    expect(evaluateExpression('Approval()', { outputs: {}, variables: {} })).toBeNull();
  });

  it('takes no argument or one quoted name', () => {
    expect(checkExpression('Approval()')).toBeNull();
    expect(checkExpression("Approval('A', 'B')")).toMatch(/takes one quoted name/);
    expect(checkExpression('Approval(1)')).toMatch(/takes one quoted name/);
    expect(checkExpression('Approval')).toMatch(/must be called/);
  });

  it('lists what a text reads, the own approval as the empty name', () => {
    expect(referencedApprovals("$[Approval('A').x] and $[Approval()]").sort()).toEqual(['', 'A']);
  });
});

describe('checkApprovalReads', () => {
  const definition = (tasks: WorkflowDefinition['tasks'], outputs?: Record<string, string>) =>
    ({ name: 'w', tasks, ...(outputs ? { outputs } : {}) }) as WorkflowDefinition;

  it('accepts reads of gated tasks, and Approval() in a gated task’s parameters', () => {
    expect(
      checkApprovalReads(
        definition(
          [
            {
              name: 'Gate',
              type: flowLog,
              parameters: { message: '$[Approval().inputs.x]' },
              manualApproval: { enabled: true, inputs: { x: { type: 'string' } } },
            },
            {
              name: 'Later',
              type: flowLog,
              dependencies: ['Gate'],
              executionCondition: { expression: "Approval('Gate').inputs.x == 'go'" },
            },
          ],
          { x: "Approval('Gate').inputs.x" },
        ),
      ),
    ).toEqual([]);
  });

  it('names each bad read and bad default', () => {
    expect(
      checkApprovalReads(
        definition(
          [
            {
              name: 'Gate',
              type: flowLog,
              executionCondition: { expression: 'Approval().inputs.x' },
              manualApproval: { enabled: true, inputs: { n: { type: 'integer', default: 'x' } } },
            },
            {
              name: 'Plain',
              type: flowLog,
              parameters: { a: ["$[Approval('Plain')]", '$[Approval()]'] },
            },
          ],
          { y: 'Approval()', z: "Approval('Nope')" },
        ),
      ),
    ).toEqual([
      'tasks[0].executionCondition.expression: Approval() is not decided yet when the condition is checked (before the approval is asked for)',
      'tasks[0].manualApproval.inputs.n.default: must be an integer, not the string "x"',
      "tasks[1].parameters.a[0]: Approval('Plain') names a task that asks for no approval (manualApproval.enabled)",
      "tasks[1].parameters.a[1]: Approval() reads the task's own approval, and task 'Plain' asks for none (manualApproval.enabled)",
      "outputs.y: Approval() reads a task's own approval; name one here: Approval('Task')",
      "outputs.z: Approval('Nope') names no task",
    ]);
  });
});
