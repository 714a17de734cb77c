import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import * as approvalRepository from './approval-repository.js';
import type { TrellisDatabase } from './database.js';
import * as executionRepository from './execution-repository.js';
import * as logRepository from './log-repository.js';
import type { Database } from './tables.js';
import * as taskExecutionRepository from './task-execution-repository.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase;
let db: Kysely<Database>;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  db = database.db;
});
afterAll(() => database?.close());

let counter = 0;

/** A Running execution of a new workflow with the given tasks; their ids by name. */
async function runningExecution(taskNames: string[]) {
  counter += 1;
  const name = `approvals-${counter}`;
  const workflow = await workflowRepository.insert(db, { name, definition: '{}' });
  const { execution } = await executionRepository.createExecutionWithTasks(db, {
    workflowId: workflow.id,
    workflowName: name,
    definition: '{}',
    taskNames,
    temporalWorkflowId: `test-${name}`,
    status: 'Running',
  });
  return { workflow, execution, taskIds: await taskExecutionRepository.taskIds(db, execution.id) };
}

/** A Running execution whose tasks each wait for an approval, requested in task order. */
async function executionAwaiting(taskNames: string[], requestedAt = new Date()) {
  const { workflow, execution, taskIds } = await runningExecution(taskNames);
  const approvals = [];
  for (const [index, taskName] of taskNames.entries()) {
    approvals.push(
      await approvalRepository.createApproval(db, {
        executionId: execution.id,
        taskExecutionId: taskIds.get(taskName)!,
        taskName,
        comment: `Check ${taskName}`,
        at: new Date(requestedAt.getTime() + index),
      }),
    );
  }
  return { workflow, execution, approvals };
}

const find = (executionId: string, approvalId: string) =>
  approvalRepository.findApproval(db, executionId, approvalId);

describe('approvalRepository', () => {
  it('records a timeout with the request: when it applies and what it decides', async () => {
    const { execution, taskIds } = await runningExecution(['Gate']);
    const at = new Date('2026-11-25T10:00:00Z');
    const approval = await approvalRepository.createApproval(db, {
      executionId: execution.id,
      taskExecutionId: taskIds.get('Gate')!,
      taskName: 'Gate',
      comment: '',
      timeout: { milliseconds: 90_000, onTimeout: 'Reject' },
      at,
    });
    expect(approval).toMatchObject({
      status: 'Pending',
      requestedAt: at,
      timesOutAt: new Date('2026-11-25T10:01:30Z'),
      onTimeout: 'Reject',
      reason: null,
    });
  });

  it('records a decision once, with who, when and why (a blank reason is none)', async () => {
    const { execution, approvals } = await executionAwaiting(['A', 'B']);
    const [a, b] = approvals;
    const at = new Date('2026-11-25T11:00:00Z');
    const decided = await approvalRepository.decideApproval(db, {
      executionId: execution.id,
      approvalId: a!.id,
      decision: 'Rejected',
      decidedBy: 'alice',
      reason: '  The totals are off.  ',
      at,
    });
    expect(decided).toMatchObject({
      status: 'Rejected',
      decidedBy: 'alice',
      decidedAt: at,
      reason: 'The totals are off.',
    });
    await expect(
      approvalRepository.decideApproval(db, {
        executionId: execution.id,
        approvalId: a!.id,
        decision: 'Approved',
        decidedBy: 'bob',
      }),
    ).rejects.toMatchObject({
      code: 'conflict',
      messages: [`Approval ${a!.id} was already rejected.`],
    });
    expect(await find(execution.id, a!.id)).toEqual(decided);

    const blank = await approvalRepository.decideApproval(db, {
      executionId: execution.id,
      approvalId: b!.id,
      decision: 'Approved',
      decidedBy: 'bob',
      reason: '   ',
    });
    expect(blank).toMatchObject({ status: 'Approved', decidedBy: 'bob', reason: null });

    await expect(
      approvalRepository.decideApproval(db, {
        executionId: execution.id,
        approvalId: crypto.randomUUID(),
        decision: 'Approved',
        decidedBy: 'bob',
      }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it("settles the engine's claim against the decision recorded first", async () => {
    const { execution, approvals } = await executionAwaiting(['A', 'B']);
    const [a, b] = approvals;
    await approvalRepository.decideApproval(db, {
      executionId: execution.id,
      approvalId: a!.id,
      decision: 'Approved',
      decidedBy: 'alice',
    });
    // A timeout firing after a person decided changes nothing: the person's decision holds.
    const held = await approvalRepository.settleDecision(db, {
      executionId: execution.id,
      approvalId: a!.id,
      decision: 'Rejected',
      decidedBy: approvalRepository.systemDecider,
      reason: 'Timed out.',
    });
    expect(held).toMatchObject({ status: 'Approved', decidedBy: 'alice', reason: null });
    // A Pending approval takes the claim.
    const taken = await approvalRepository.settleDecision(db, {
      executionId: execution.id,
      approvalId: b!.id,
      decision: 'Rejected',
      decidedBy: approvalRepository.temporalDecider,
      reason: 'From the CLI',
    });
    expect(taken).toMatchObject({
      status: 'Rejected',
      decidedBy: 'temporal',
      reason: 'From the CLI',
    });
  });

  it("an execution's end cancels its Pending approvals, keeps decided ones, and only once", async () => {
    const { execution, approvals } = await executionAwaiting(['A', 'B']);
    const [a, b] = approvals;
    await approvalRepository.decideApproval(db, {
      executionId: execution.id,
      approvalId: b!.id,
      decision: 'Approved',
      decidedBy: 'alice',
    });
    const at = new Date('2026-11-25T12:00:00Z');
    const log = {
      executionId: execution.id,
      taskExecutionId: null,
      dedupeKey: 'test:end',
      level: 'Warning' as const,
      message: 'Execution canceled: Canceled by admin.',
      timeStamp: at,
    };
    await executionRepository.markExecutionFinished(
      db,
      execution.id,
      { status: 'Canceled', message: 'Canceled by admin.', at },
      [log],
    );
    const canceled = {
      status: 'Canceled',
      decidedBy: 'system',
      decidedAt: at,
      reason: 'The execution was canceled before a decision: Canceled by admin.',
    };
    expect(await find(execution.id, a!.id)).toMatchObject(canceled);
    expect(await find(execution.id, b!.id)).toMatchObject({
      status: 'Approved',
      decidedBy: 'alice',
    });
    const logs = await logRepository.listExecutionLogs(db, execution.id);
    expect(logs.items.map((entry) => entry.message)).toEqual([log.message]);

    // The first end written wins: a later one changes neither the execution nor its approvals.
    await executionRepository.markExecutionFinished(db, execution.id, {
      status: 'Failed',
      message: 'Too late.',
    });
    expect(await find(execution.id, a!.id)).toMatchObject(canceled);
    expect((await executionRepository.findExecution(db, execution.id))?.status).toBe('Canceled');

    // Deciding a Canceled approval is a conflict of its own.
    await expect(
      approvalRepository.decideApproval(db, {
        executionId: execution.id,
        approvalId: a!.id,
        decision: 'Approved',
        decidedBy: 'bob',
      }),
    ).rejects.toMatchObject({
      code: 'conflict',
      problems: [
        {
          code: 'approval.canceled',
          message: `Approval ${a!.id} was canceled: its execution ended before a decision.`,
        },
      ],
    });
  });

  it('an execution that ends without logs, or is abandoned, cancels its approvals too', async () => {
    const failed = await executionAwaiting(['A']);
    await executionRepository.markExecutionFinished(db, failed.execution.id, {
      status: 'Failed',
      message: 'Timed out after 300 ms.',
    });
    expect(await find(failed.execution.id, failed.approvals[0]!.id)).toMatchObject({
      status: 'Canceled',
      reason: 'The execution failed before a decision: Timed out after 300 ms.',
    });

    const abandoned = await executionAwaiting(['A']);
    const message = 'Canceled: the Temporal run was terminated outside Trellis.';
    expect(
      await executionRepository.finishAbandonedExecution(db, abandoned.execution.id, {
        status: 'Canceled',
        message,
        at: new Date(),
      }),
    ).toMatchObject({ workflowId: abandoned.execution.workflowId });
    expect(await find(abandoned.execution.id, abandoned.approvals[0]!.id)).toMatchObject({
      status: 'Canceled',
      decidedBy: 'system',
      reason: `The execution was canceled before a decision: ${message}`,
    });
  });

  it('undoes an undelivered decision: Pending while the run goes on, Canceled once it ended', async () => {
    const running = await executionAwaiting(['A']);
    const approvalId = running.approvals[0]!.id;
    await approvalRepository.decideApproval(db, {
      executionId: running.execution.id,
      approvalId,
      decision: 'Approved',
      decidedBy: 'alice',
      reason: 'Fine.',
    });
    await approvalRepository.undoApprovalDecision(db, approvalId);
    expect(await find(running.execution.id, approvalId)).toMatchObject({
      status: 'Pending',
      decidedBy: null,
      decidedAt: null,
      reason: null,
    });

    // The run ended after the decision was recorded (its end left the decided approval alone).
    await approvalRepository.decideApproval(db, {
      executionId: running.execution.id,
      approvalId,
      decision: 'Approved',
      decidedBy: 'alice',
    });
    await executionRepository.markExecutionFinished(db, running.execution.id, {
      status: 'Canceled',
      message: 'Canceled by bob.',
    });
    await approvalRepository.undoApprovalDecision(db, approvalId);
    const undone = await find(running.execution.id, approvalId);
    expect(undone).toMatchObject({
      status: 'Canceled',
      decidedBy: 'system',
      reason: 'The execution ended before the decision reached it.',
    });
    expect(undone!.decidedAt).toBeInstanceOf(Date);
  });

  it('lists every workflow’s approvals oldest first, by status and workflow, in pages', async () => {
    const base = new Date('2030-01-01T00:00:00Z');
    const first = await executionAwaiting(['A', 'B'], base);
    const second = await executionAwaiting(['C'], new Date(base.getTime() + 10));
    await approvalRepository.decideApproval(db, {
      executionId: first.execution.id,
      approvalId: first.approvals[1]!.id,
      decision: 'Approved',
      decidedBy: 'alice',
    });
    const ours = new Set([...first.approvals, ...second.approvals].map((approval) => approval.id));
    const pending = await approvalRepository.listAllApprovals(db, { status: 'Pending' });
    const mine = pending.items.filter((item) => ours.has(item.id));
    expect(mine.map((item) => [item.taskName, item.workflowId])).toEqual([
      ['A', first.workflow.id],
      ['C', second.workflow.id],
    ]);
    // Oldest first across the whole list.
    const times = pending.items.map((item) => item.requestedAt.getTime());
    expect(times).toEqual([...times].sort((x, y) => x - y));

    const ofFirst = await approvalRepository.listAllApprovals(db, {
      workflowId: first.workflow.id,
    });
    expect(ofFirst.items.map((item) => [item.taskName, item.status])).toEqual([
      ['A', 'Pending'],
      ['B', 'Approved'],
    ]);
    const page = await approvalRepository.listAllApprovals(db, {
      workflowId: first.workflow.id,
      page: { page: 2, pageSize: 1 },
    });
    expect(page.items.map((item) => item.taskName)).toEqual(['B']);
    expect(page.pagination).toEqual({ page: 2, pageSize: 1, totalCount: 2, totalPages: 2 });
  });
});
