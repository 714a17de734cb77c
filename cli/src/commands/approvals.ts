import type { components } from '@trellis/sdk';
import { Option, type Command } from 'commander';
import { approvalIdOf, approvalsOfExecution, workflowIdOf } from '@trellis/sdk/mcp';
import { UsageError } from '../failures.js';
import { styleStatus, time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';

type ApprovalStatus = components['schemas']['ApprovalStatus'];
const approvalStatuses: ApprovalStatus[] = ['Pending', 'Approved', 'Rejected', 'Canceled'];

/** `trellis approvals list|approve|reject`. */
export function approvalCommands(program: Command, act: Act): void {
  const approvals = program
    .command('approvals')
    .alias('approval')
    .description('human-approval steps: list, approve, reject');

  approvals
    .command('list')
    .alias('ls')
    .description('list approvals: across workflows (the inbox), or of one execution')
    .argument('[workflow]', 'with <execution>: only that execution\u2019s (name or id)')
    .argument('[execution]', 'the execution id')
    .addOption(
      new Option('--status <status>', 'only those in this status').choices(approvalStatuses),
    )
    .action(
      act<[string?, string?], { status?: ApprovalStatus }>(
        async ({ trellis, output }, [workflow, executionId], { status }) => {
          const { colors } = output;
          if (workflow !== undefined && executionId === undefined) {
            throw new UsageError('Give both a workflow and an execution, or neither (the inbox).');
          }
          if (workflow === undefined || executionId === undefined) {
            const inbox = [];
            for await (const approval of trellis.all('/approvals', {
              params: { query: status ? { status } : {} },
            })) {
              inbox.push(approval);
            }
            output.data(inbox);
            if (inbox.length === 0) return output.line('No approvals.');
            const rows = inbox.map((approval) => [
              approval.id,
              approval.workflowId,
              approval.executionId,
              approval.taskName,
              styleStatus(colors, approval.status),
              time(approval.requestedAt),
              approval.comment,
            ]);
            const head = ['ID', 'WORKFLOW', 'EXECUTION', 'TASK', 'STATUS', 'REQUESTED', 'COMMENT'];
            return output.line(table(colors, head, rows));
          }
          const workflowId = await workflowIdOf(trellis, workflow);
          const listed = await approvalsOfExecution(trellis, { workflowId, executionId });
          const chosen = status ? listed.filter((approval) => approval.status === status) : listed;
          output.data(chosen);
          if (chosen.length === 0) return output.line('No approvals.');
          const rows = chosen.map((approval) => [
            approval.id,
            approval.taskName,
            styleStatus(colors, approval.status),
            time(approval.requestedAt),
            approval.decidedBy ?? '',
            approval.comment,
          ]);
          const head = ['ID', 'TASK', 'STATUS', 'REQUESTED', 'DECIDED BY', 'COMMENT'];
          output.line(table(colors, head, rows));
        },
      ),
    );

  const decisions = [
    ['approve', 'approve a pending approval: its task runs'],
    ['reject', 'reject a pending approval: its task fails with the rejection'],
  ] as const;
  for (const [decision, description] of decisions) {
    approvals
      .command(decision)
      .description(description)
      .argument('<workflow>', 'its name or id')
      .argument('<execution>', 'the execution id')
      .argument('<approval>', 'the approval id, or the name of the task waiting for it')
      .option('-r, --reason <text>', 'why (recorded with the decision)')
      .action(
        act<[string, string, string], { reason?: string }>(
          async ({ trellis, output }, [workflow, executionId, approval], { reason }) => {
            const workflowId = await workflowIdOf(trellis, workflow);
            const approvalId = await approvalIdOf(trellis, { workflowId, executionId }, approval);
            const { messages } = await trellis.envelope.POST(
              `/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/${decision}`,
              {
                params: { path: { workflowId, executionId, approvalId } },
                ...(reason === undefined ? {} : { body: { reason } }),
              },
            );
            output.data({ approvalId, messages });
            for (const message of messages) output.line(message);
          },
        ),
      );
  }
}
