/**
 * Approvals in the console, in a real browser against a real Trellis: the inbox renders an
 * approval's form from its declared inputs, checks it before sending (nothing is decided while a
 * field is wrong), approves with a value that a later task then reads; an approval the user may
 * not decide shows why, its buttons disabled; and an approval link opens the console's decision
 * page, which decides without signing in, once.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { approvalLinkToken } from '#application/notifications/approval-links.js';
import { approvalsOncePaused, start } from '../support/engine-support.js';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({ worker: true });

const suffix = Date.now().toString(36);

/** Pay asks for an amount (and a note); Report reads the decision. */
function payment(name: string, approvers?: Record<string, unknown>) {
  return {
    name,
    tasks: [
      {
        name: 'Pay',
        type: { plugin: 'Flow/Log' },
        parameters: { message: 'Paying $[Approval().inputs.amount]', level: 'Info' },
        manualApproval: {
          enabled: true,
          comment: 'How much may we pay?',
          inputs: {
            amount: { type: 'integer', required: true, description: 'In cents.' },
            note: { type: 'string', default: 'none' },
          },
          ...(approvers ? { approvers } : {}),
        },
      },
      {
        name: 'Report',
        type: { plugin: 'Flow/Log' },
        dependencies: ['Pay'],
        parameters: {
          message: "$[Approval('Pay').decidedBy] paid $[Approval('Pay').inputs.amount]",
          level: 'Info',
        },
      },
    ],
  };
}

async function pendingApproval(ids: { workflowId: string; executionId: string }) {
  const [approval] = await session.trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/approvals',
    { params: { path: ids } },
  );
  return approval!;
}

async function reportOf(ids: { workflowId: string; executionId: string }) {
  await session.trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
    timeoutMs: 30_000,
  });
  const tasks = await session.trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks',
    {
      params: { path: ids },
    },
  );
  const report = tasks.find((task) => task.name === 'Report')!;
  const detail = await session.trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
    { params: { path: { ...ids, taskExecutionId: report.id } } },
  );
  return detail.output;
}

describe('approvals in the console', () => {
  it('approves from the inbox with the generated form, and shows who may decide', async () => {
    const mine = await start(session.trellis.admin, payment(`Payment-${suffix}`));
    const theirs = await start(
      session.trellis.admin,
      payment(`Guarded-${suffix}`, { users: ['treasurer'] }),
    );
    await approvalsOncePaused(session.trellis.admin, mine.workflowId, mine.executionId);
    await approvalsOncePaused(session.trellis.admin, theirs.workflowId, theirs.executionId);

    const page: Page = await session.openTab();
    await page.goto(`${session.trellis.baseUrl}/ui/approvals`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();

    // Not an approver: the form is shown, disabled, with who may decide.
    const guarded = page.locator('li.card').filter({ hasText: `Guarded-${suffix}` });
    await guarded.getByText('it may be decided by the users "treasurer"').waitFor();
    await expect(guarded.getByRole('button', { name: 'Approve' }).isDisabled()).resolves.toBe(true);
    await expect(guarded.getByRole('button', { name: 'Reject' }).isDisabled()).resolves.toBe(true);

    const card = page.locator('li.card').filter({ hasText: `Payment-${suffix}` });
    const amount = card.getByLabel(/^amount/);
    await expect(amount.getAttribute('aria-required')).resolves.toBe('true');
    await card.getByText('In cents.').waitFor();
    await expect(card.getByLabel(/^note/).inputValue()).resolves.toBe('none');
    await record(page, 'approvals-form');

    // Checked before it is sent: nothing is decided.
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.getByText('amount is required').waitFor();
    await amount.fill('12.5');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.getByText('amount must be a whole number').waitFor();
    await expect(amount.getAttribute('aria-invalid')).resolves.toBe('true');
    await record(page, 'approvals-form-problems');
    expect(await pendingApproval(mine)).toMatchObject({ status: 'Pending' });

    await amount.fill('4200');
    await card.getByLabel('Reason for Pay').fill('Invoice 17.');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText(`Approved Pay of Payment-${suffix}.`).waitFor();
    await expect(reportOf(mine)).resolves.toMatchObject({ message: 'admin paid 4200' });
    expect(await pendingApproval(mine)).toMatchObject({
      status: 'Approved',
      reason: 'Invoice 17.',
      inputs: { amount: 4200, note: 'none' },
      decidedVia: 'Api',
    });
    expect(session.problems).toEqual([]);
    await page.close();
  });

  it('decides through an approval link on the console page, once, without signing in', async () => {
    const ids = await start(
      session.trellis.admin,
      payment(`Linked-${suffix}`, { users: ['treasurer'] }),
    );
    const [approval] = await approvalsOncePaused(
      session.trellis.admin,
      ids.workflowId,
      ids.executionId,
    );
    const { token } = await approvalLinkToken(session.trellis.db, {
      eventId: `msg_console_${suffix}`,
      approvalId: approval!.id,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const page = await session.openTab();
    await page.goto(`${session.trellis.baseUrl}/approvals/decide/${token}`);
    expect(new URL(page.url()).pathname).toBe(`/ui/decide/${token}`);
    await page.getByRole('heading', { name: 'Decide an approval', level: 1 }).waitFor();
    await page.getByText('How much may we pay?').waitFor();
    await record(page, 'approval-link');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('amount is required').waitFor();
    await page.getByLabel(/^amount/).fill('99');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').getByText('Approved. Thank you').waitFor();
    await expect(reportOf(ids)).resolves.toMatchObject({ message: 'approval link paid 99' });
    expect(await pendingApproval(ids)).toMatchObject({
      decidedVia: 'Link',
      inputs: { amount: 99 },
    });

    // Used: the page says so.
    await page.goto(`${session.trellis.baseUrl}/ui/decide/${token}`);
    await page.getByText('This approval link was used already').waitFor();
    expect(session.problems).toEqual([]);
    await page.close();
  });
});
