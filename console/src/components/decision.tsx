/**
 * Approve or reject an approval, with a reason for the record and, when the approval declares
 * inputs (`manualApproval.inputs`), a form generated from them: checked before sending, the
 * server's 400 shown beside the fields. A user who is not one of its approvers sees why, and the
 * buttons are disabled.
 */
import type { Approval, TrellisClient } from '@trellis/sdk';
import { useMemo, useState } from 'preact/hooks';
import { readInputs } from '../definition.js';
import { Problems } from './common.js';
import { useInputsForm } from './inputs-form.js';

export type Decision = 'approve' | 'reject';

/** What a decision sends: the reason, and the inputs with an approval. */
export interface DecisionBody {
  reason?: string;
  inputs?: Record<string, unknown>;
}

export interface DecisionFormProps {
  approval: Pick<Approval, 'id' | 'taskName'> & {
    /** The declared inputs (`manualApproval.inputs`, as the API serves them). */
    form?: unknown;
    callerMayDecide?: boolean;
    callerRefusal?: string | null;
  };
  /** Sends the decision; a rejection with a `TrellisApiError` is shown on the form. */
  send: (decision: Decision, body: DecisionBody) => Promise<void>;
  onDecided: (decision: Decision) => void;
}

/** Sends a decision through the API as the signed-in user. */
export function decideAsUser(
  client: TrellisClient,
  approval: Pick<Approval, 'id' | 'workflowId' | 'executionId'>,
): DecisionFormProps['send'] {
  return async (decision, body) => {
    const params = {
      path: {
        workflowId: approval.workflowId,
        executionId: approval.executionId,
        approvalId: approval.id,
      },
    };
    if (decision === 'approve') {
      await client.POST(
        '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
        { params, body },
      );
    } else {
      // A rejection takes no inputs (the form gives none to one).
      const { reason } = body;
      await client.POST(
        '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
        { params, body: reason === undefined ? {} : { reason } },
      );
    }
  };
}

export function DecisionForm({ approval, send, onDecided }: DecisionFormProps) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<Decision | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const declarations = useMemo(() => readInputs(approval.form), [approval.form]);
  const inputs = useInputsForm(declarations, `approval-${approval.id}`);
  const id = `reason-${approval.id}`;
  const refusalId = `refusal-${approval.id}`;
  const refused = approval.callerMayDecide === false;

  const decide = async (decision: Decision) => {
    setProblems([]);
    const values = decision === 'approve' && inputs.fields.length > 0 ? inputs.read() : undefined;
    if (values === null) return;
    setBusy(decision);
    const body: DecisionBody = {
      ...(reason.trim() === '' ? {} : { reason: reason.trim() }),
      ...(values !== undefined ? { inputs: values } : {}),
    };
    try {
      await send(decision, body);
      onDecided(decision);
    } catch (error) {
      setProblems(inputs.failed(error));
    } finally {
      setBusy(null);
    }
  };

  return (
    <form class="decision" onSubmit={(event) => event.preventDefault()} noValidate>
      {inputs.fields.length > 0 && (
        <fieldset class="approval-inputs" disabled={refused}>
          <legend>Values for {approval.taskName} (given with an approval)</legend>
          {inputs.rendered}
        </fieldset>
      )}
      <label for={id}>Reason for {approval.taskName} (optional, kept with the decision)</label>
      <textarea
        id={id}
        rows={2}
        maxLength={2000}
        value={reason}
        disabled={refused}
        onInput={(event) => setReason(event.currentTarget.value)}
      />
      {refused && (
        <p class="refusal" id={refusalId}>
          {approval.callerRefusal ?? 'You may not decide this approval.'}
        </p>
      )}
      <Problems messages={problems} title="Not decided:" />
      <div class="actions">
        <button
          type="button"
          class="primary approve"
          disabled={busy !== null || refused}
          aria-describedby={refused ? refusalId : undefined}
          onClick={() => void decide('approve')}
        >
          {busy === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy !== null || refused}
          aria-describedby={refused ? refusalId : undefined}
          onClick={() => void decide('reject')}
        >
          {busy === 'reject' ? 'Rejecting…' : 'Reject'}
        </button>
      </div>
    </form>
  );
}
