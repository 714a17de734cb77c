/** Approve or reject an approval, with a reason for the record. */
import type { Approval, TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { messagesOf, Problems } from './common.js';

export type Decision = 'approve' | 'reject';

export interface DecisionFormProps {
  client: TrellisClient;
  approval: Pick<Approval, 'id' | 'workflowId' | 'executionId' | 'taskName'>;
  onDecided: (decision: Decision) => void;
}

export function DecisionForm({ client, approval, onDecided }: DecisionFormProps) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<Decision | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const id = `reason-${approval.id}`;

  const decide = async (decision: Decision) => {
    setBusy(decision);
    setProblems([]);
    const params = {
      path: {
        workflowId: approval.workflowId,
        executionId: approval.executionId,
        approvalId: approval.id,
      },
    };
    const body = reason.trim() === '' ? {} : { reason: reason.trim() };
    try {
      if (decision === 'approve') {
        await client.POST(
          '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
          { params, body },
        );
      } else {
        await client.POST(
          '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
          { params, body },
        );
      }
      onDecided(decision);
    } catch (error) {
      setProblems(messagesOf(error));
    } finally {
      setBusy(null);
    }
  };

  return (
    <form class="decision" onSubmit={(event) => event.preventDefault()}>
      <label for={id}>Reason for {approval.taskName} (optional, kept with the decision)</label>
      <textarea
        id={id}
        rows={2}
        maxLength={2000}
        value={reason}
        onInput={(event) => setReason(event.currentTarget.value)}
      />
      <Problems messages={problems} title="Not decided:" />
      <div class="actions">
        <button
          type="button"
          class="primary approve"
          disabled={busy !== null}
          onClick={() => void decide('approve')}
        >
          {busy === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy !== null}
          onClick={() => void decide('reject')}
        >
          {busy === 'reject' ? 'Rejecting…' : 'Reject'}
        </button>
      </div>
    </form>
  );
}
