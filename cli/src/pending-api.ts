/**
 * Calls of API operations that are being added to the contract (issue 11): the approvals inbox
 * `GET /approvals` and the `reason` of a rejection. The SDK does not type them yet, so they go
 * through its raw openapi-fetch client (authentication included) and fail as typed calls do, with
 * `TrellisApiError`. Once the contract has them, they become ordinary typed calls.
 */
import { TrellisApiError, type components, type TrellisClient } from '@trellis/sdk';

/** An approval in the inbox: one of an execution's, with where it waits. */
export type InboxApproval = components['schemas']['Approval'] & {
  workflowId?: string;
  workflowName?: string;
  executionId?: string;
};

interface UntypedClient {
  GET(url: string, init?: object): Promise<{ data?: unknown; error?: unknown; response: Response }>;
  POST(
    url: string,
    init?: object,
  ): Promise<{ data?: unknown; error?: unknown; response: Response }>;
}

const untyped = (trellis: TrellisClient) => trellis.raw as unknown as UntypedClient;

async function dataOf(
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<{ data: unknown; messages: string[] }> {
  const { data, error, response } = await call;
  if (!response.ok) throw TrellisApiError.fromResponse(response, error);
  const body = data as { data?: unknown; messages?: string[] } | undefined;
  return { data: body?.data, messages: body?.messages ?? [] };
}

/** `GET /approvals`: the approvals across every workflow the user may see. */
export async function listInbox(
  trellis: TrellisClient,
  query: { status?: string },
): Promise<InboxApproval[]> {
  const { data } = await dataOf(untyped(trellis).GET('/approvals', { params: { query } }));
  return Array.isArray(data) ? (data as InboxApproval[]) : [];
}

/** Rejects an approval with a reason (`{reason}` in the body of the reject operation). */
export async function rejectWithReason(
  trellis: TrellisClient,
  path: { workflowId: string; executionId: string; approvalId: string },
  reason: string,
): Promise<string[]> {
  const { messages } = await dataOf(
    untyped(trellis).POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
      { params: { path }, body: { reason } },
    ),
  );
  return messages;
}
