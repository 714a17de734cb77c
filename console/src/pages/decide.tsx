/**
 * An approval link's page (`/ui/decide/<token>`, where `/approvals/decide/<token>` sends a
 * browser): the approval the link decides, its form, and approve or reject, without signing in.
 * The link works once; an expired, used or forged one says so.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Loading, shortId, useLoad } from '../components/common.js';
import { DecisionForm, type Decision, type DecisionBody } from '../components/decision.js';
import { formatDateTime } from '../format.js';
import { anonymousClient } from '../session.js';

export function DecidePage({ token }: { token: string }) {
  const client = useMemo(anonymousClient, []);
  const [decided, setDecided] = useState<Decision | null>(null);
  const link = useLoad(
    () => client.GET('/approvals/decide/{token}', { params: { path: { token } } }),
    [token],
  );
  const send = async (decision: Decision, body: DecisionBody) => {
    await client.POST('/approvals/decide/{token}', {
      params: { path: { token } },
      body: { decision: decision === 'approve' ? 'Approve' : 'Reject', ...body },
    });
  };
  useEffect(() => {
    document.title = 'Decide an approval · Trellis';
  }, []);
  return (
    <main id="main" class="decide">
      <h1>Decide an approval</h1>
      {decided ? (
        <p class="status-line" role="status">
          {decided === 'approve' ? 'Approved' : 'Rejected'}. Thank you: the run goes on. This link
          no longer works.
        </p>
      ) : (
        <Loading loaded={link}>
          {(approval) => (
            <section class="card" aria-labelledby="approval-heading">
              <h2 id="approval-heading">
                {approval.taskName} <span class="muted">in</span> {approval.workflowName}
              </h2>
              <p>
                Run <code>{shortId(approval.executionId)}</code> · asked{' '}
                {formatDateTime(approval.requestedAt)} · this link works until{' '}
                {formatDateTime(approval.expiresAt)}, once
              </p>
              {approval.comment && <blockquote>{approval.comment}</blockquote>}
              <DecisionForm
                approval={{
                  id: approval.approvalId,
                  taskName: approval.taskName,
                  form: approval.form,
                }}
                send={send}
                onDecided={setDecided}
              />
            </section>
          )}
        </Loading>
      )}
    </main>
  );
}
