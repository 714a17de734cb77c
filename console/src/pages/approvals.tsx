/**
 * The inbox: every workflow's approvals waiting for a decision, oldest first, each with its
 * workflow, run, task, comment and how long it has waited; approve or reject with a reason.
 */
import type { TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { Loading, Pager, shortId, useLoad } from '../components/common.js';
import { DecisionForm, decideAsUser, type Decision } from '../components/decision.js';
import { durationBetween, formatDateTime } from '../format.js';
import { Link } from '../router.js';

const pageSize = 20;

export function ApprovalsPage({ client }: { client: TrellisClient }) {
  const [page, setPage] = useState(1);
  const [decided, setDecided] = useState<string | null>(null);
  const inbox = useLoad(async () => {
    const listed = await client.page('/approvals', {
      params: { query: { status: 'Pending', page, pageSize } },
    });
    // Approvals name their workflow by id; the inbox shows its name.
    const ids = [...new Set(listed.data.map((approval) => approval.workflowId))];
    const names = new Map(
      await Promise.all(
        ids.map(async (workflowId) => {
          const workflow = await client.GET('/workflows/{workflowId}', {
            params: { path: { workflowId } },
          });
          return [workflowId, workflow.name] as const;
        }),
      ),
    );
    return { ...listed, names, now: Date.now() };
  }, [page]);

  const onDecided = (task: string, workflow: string) => (decision: Decision) => {
    setDecided(`${decision === 'approve' ? 'Approved' : 'Rejected'} ${task} of ${workflow}.`);
    inbox.reload();
  };

  return (
    <main id="main">
      <div class="page-head">
        <h1>Approvals</h1>
        <button type="button" onClick={inbox.reload}>
          Refresh
        </button>
      </div>
      <p class="status-line" role="status">
        {decided}
      </p>
      <Loading loaded={inbox}>
        {({ data, pagination, names, now }) =>
          data.length === 0 ? (
            <p class="muted">Nothing waits for a decision.</p>
          ) : (
            <>
              <ul class="cards">
                {data.map((approval) => {
                  const workflow = names.get(approval.workflowId) ?? approval.workflowId;
                  return (
                    <li class="card" key={approval.id} data-approval={approval.id}>
                      <h2>
                        {approval.taskName} <span class="muted">in</span>{' '}
                        <Link to={`/workflows/${approval.workflowId}`}>{workflow}</Link>
                      </h2>
                      <p>
                        Run{' '}
                        <Link
                          to={`/workflows/${approval.workflowId}/runs/${approval.executionId}`}
                          aria-label={`Run ${approval.executionId} of ${workflow}`}
                        >
                          <code>{shortId(approval.executionId)}</code>
                        </Link>{' '}
                        · waiting {durationBetween(approval.requestedAt, null, now)} (since{' '}
                        {formatDateTime(approval.requestedAt)})
                        {approval.timesOutAt && (
                          <>
                            {' '}
                            · {approval.onTimeout === 'Approve' ? 'approved' : 'rejected'} by itself
                            at {formatDateTime(approval.timesOutAt)}
                          </>
                        )}
                      </p>
                      {approval.comment && <blockquote>{approval.comment}</blockquote>}
                      <DecisionForm
                        approval={approval}
                        send={decideAsUser(client, approval)}
                        onDecided={onDecided(approval.taskName, workflow)}
                      />
                    </li>
                  );
                })}
              </ul>
              <Pager
                page={pagination.page}
                totalPages={pagination.totalPages}
                totalCount={pagination.totalCount}
                label="Approval pages"
                onPage={setPage}
              />
            </>
          )
        }
      </Loading>
    </main>
  );
}
