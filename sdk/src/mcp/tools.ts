import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { TrellisClient } from '../client.js';
import { TrellisApiError } from '../errors.js';
import type { components } from '../generated/schema.js';
import { definitionInterface } from './definition-text.js';
import { approvalsOfExecution, tasksOfExecution } from './execution-lists.js';
import { readLogs } from './execution-logs.js';
import { ToolError } from './tool-error.js';
import { approvalIdOf, workflowIdOf } from './resolve.js';
import { inputsSchema, runToolNames, storedWorkflows } from './run-tools.js';

type ApprovalStatus = components['schemas']['ApprovalStatus'];
type ExecutionStatus = components['schemas']['ExecutionStatus'];

const endStatuses: ExecutionStatus[] = ['Completed', 'Failed', 'Canceled'];

/** The arguments a tool was called with. */
export type Arguments = Record<string, unknown>;

/** What a call runs with besides its arguments: the client's cancellation, and progress to tell. */
export interface CallContext {
  signal: AbortSignal;
  /** Tells the client the call goes on (a client may keep waiting past its timeout on it). */
  progress: (message: string) => void;
}

/** A tool with a fixed input schema, and what calling it does; resolves to its JSON result. */
interface FixedTool {
  tool: Tool;
  call(
    trellis: TrellisClient,
    args: Arguments,
    context: CallContext,
  ): Promise<Record<string, unknown>>;
}

const reading = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;
const changing = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

const workflowArgument = {
  type: 'string',
  description: "The workflow's name or id.",
} as const;
const executionArgument = { type: 'string', description: 'The execution id.' } as const;

/** A required text argument (the schema says so; a client need not have checked). */
function text(args: Arguments, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') {
    throw new ToolError(`"${name}" is required (a string).`);
  }
  return value;
}

function optionalText(args: Arguments, name: string): string | undefined {
  return args[name] === undefined ? undefined : text(args, name);
}

const maxWaitSeconds = 600;
/** Under the 60 s an MCP client waits for an answer by default. */
const defaultWaitSeconds = 30;
const progressEveryMs = 5000;
const defaultLogLimit = 500;
const approvalStatuses: ApprovalStatus[] = ['Pending', 'Approved', 'Rejected', 'Canceled'];

/** The tools every session has, whatever the workflows. */
export const fixedTools: FixedTool[] = [
  {
    tool: {
      name: 'list_workflows',
      title: 'List workflows',
      description:
        "The stored workflows of the project: id, name, when last changed, and the name of each one's run tool.",
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: reading,
    },
    async call(trellis) {
      const workflows = await storedWorkflows(trellis);
      const toolOf = new Map([...runToolNames(workflows)].map(([tool, { id }]) => [id, tool]));
      return {
        workflows: workflows.map(({ id, name, modifiedDate }) => ({
          id,
          name,
          modifiedDate,
          runTool: toolOf.get(id),
        })),
      };
    },
  },
  {
    tool: {
      name: 'describe_workflow',
      title: 'Describe a workflow',
      description:
        'One workflow: its definition, the inputs a run takes (declarations and their JSON Schema), the outputs a completed run gives back, and its run tool.',
      inputSchema: {
        type: 'object',
        properties: { workflow: workflowArgument },
        required: ['workflow'],
        additionalProperties: false,
      },
      annotations: reading,
    },
    async call(trellis, args) {
      const workflowId = await workflowIdOf(trellis, text(args, 'workflow'));
      const [detail, workflows] = await Promise.all([
        trellis.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
        storedWorkflows(trellis),
      ]);
      const declared = definitionInterface(detail.workflow);
      const runTool = [...runToolNames(workflows)].find(([, { id }]) => id === workflowId)?.[0];
      return {
        id: detail.id,
        name: detail.name,
        revision: detail.revision,
        ...(declared.description === undefined ? {} : { description: declared.description }),
        inputs: declared.inputs,
        inputsSchema: inputsSchema(declared.inputs),
        outputs: declared.outputs,
        runTool,
        definition: JSON.parse(detail.workflow) as unknown,
      };
    },
  },
  {
    tool: {
      name: 'follow_execution',
      title: 'Follow a run',
      description:
        'Waits until a run ends (Completed, Failed or Canceled), pauses for an approval, or the timeout passes; then tells its status, its outputs, the tasks that failed with why, and the approvals it waits for.',
      inputSchema: {
        type: 'object',
        properties: {
          workflow: workflowArgument,
          executionId: executionArgument,
          timeoutSeconds: {
            type: 'integer',
            minimum: 0,
            maximum: maxWaitSeconds,
            default: defaultWaitSeconds,
            description:
              'How long to wait for the end (0: tell the status now). Progress is sent every 5 s, for clients that wait on it past their own timeout.',
          },
        },
        required: ['workflow', 'executionId'],
        additionalProperties: false,
      },
      annotations: reading,
    },
    async call(trellis, args, { signal, progress }) {
      const workflowId = await workflowIdOf(trellis, text(args, 'workflow'));
      const executionId = text(args, 'executionId');
      const seconds = args.timeoutSeconds ?? defaultWaitSeconds;
      if (typeof seconds !== 'number' || !(seconds >= 0 && seconds <= maxWaitSeconds)) {
        throw new ToolError(`"timeoutSeconds" must be a number from 0 to ${maxWaitSeconds}.`);
      }
      const path = { workflowId, executionId };
      if (seconds > 0) {
        const since = Date.now();
        const ticker = setInterval(
          () => progress(`waited ${Math.round((Date.now() - since) / 1000)} s`),
          progressEveryMs,
        );
        try {
          await trellis.waitForExecution(workflowId, executionId, {
            timeoutMs: seconds * 1000,
            until: [...endStatuses, 'Paused'],
            signal,
          });
        } catch (error) {
          // Still running when the time is up: the answer below says so.
          if (error instanceof TrellisApiError || signal.aborted) throw error;
        } finally {
          clearInterval(ticker);
        }
      }
      const execution = await trellis.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path },
      });
      const ended = endStatuses.includes(execution.status);
      const [tasks, approvals] = await Promise.all([
        tasksOfExecution(trellis, path),
        ended ? [] : approvalsOfExecution(trellis, path),
      ]);
      return {
        workflowId,
        executionId,
        status: execution.status,
        ended,
        executionStart: execution.executionStart,
        executionEnd: execution.executionEnd,
        inputs: execution.inputs,
        outputs: execution.outputs,
        failedTasks: tasks
          .filter((task) => task.status === 'Failed')
          .map(({ name, message }) => ({ name, message })),
        pendingApprovals: approvals
          .filter((approval) => approval.status === 'Pending')
          .map(({ id, taskName, comment, form }) => ({ id, taskName, comment, form })),
      };
    },
  },
  {
    tool: {
      name: 'read_logs',
      title: 'Read a run\u2019s logs',
      description:
        "A run's log entries and its tasks' (or one task's), oldest first: the last `limit` of them.",
      inputSchema: {
        type: 'object',
        properties: {
          workflow: workflowArgument,
          executionId: executionArgument,
          task: { type: 'string', description: "Only this task's entries (its name)." },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: 10_000,
            default: defaultLogLimit,
            description: 'At most this many entries, the latest.',
          },
        },
        required: ['workflow', 'executionId'],
        additionalProperties: false,
      },
      annotations: reading,
    },
    async call(trellis, args) {
      const workflowId = await workflowIdOf(trellis, text(args, 'workflow'));
      const path = { workflowId, executionId: text(args, 'executionId') };
      const limit = args.limit ?? defaultLogLimit;
      if (typeof limit !== 'number' || !(limit >= 1)) {
        throw new ToolError('"limit" must be a positive number.');
      }
      const entries = await readLogs(trellis, path, optionalText(args, 'task'));
      return {
        total: entries.length,
        entries: entries
          .slice(-limit)
          .map(({ timeStamp, level, taskName, message, exception }) => ({
            timeStamp,
            level,
            ...(taskName === undefined ? {} : { task: taskName }),
            message,
            ...(exception ? { exception } : {}),
          })),
      };
    },
  },
  {
    tool: {
      name: 'list_approvals',
      title: 'List approvals',
      description:
        'Approvals across the workflows (oldest first), by default those waiting for a decision: which run and task, what the approver is asked, the values a decision takes (form) and whether you may decide it.',
      inputSchema: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: approvalStatuses, default: 'Pending' },
          workflow: { ...workflowArgument, description: "Only this workflow's (name or id)." },
        },
        additionalProperties: false,
      },
      annotations: reading,
    },
    async call(trellis, args) {
      const status = (optionalText(args, 'status') ?? 'Pending') as ApprovalStatus;
      if (!approvalStatuses.includes(status)) {
        throw new ToolError(`"status" must be one of ${approvalStatuses.join(', ')}.`);
      }
      const workflow = optionalText(args, 'workflow');
      const workflowId = workflow === undefined ? undefined : await workflowIdOf(trellis, workflow);
      const approvals = [];
      for await (const approval of trellis.all('/approvals', {
        params: { query: { status, ...(workflowId ? { workflowId } : {}) } },
      })) {
        approvals.push(approval);
      }
      return { approvals };
    },
  },
  {
    tool: {
      name: 'decide_approval',
      title: 'Approve or reject',
      description:
        "Decides a pending approval: approve (the task runs, with the form's inputs) or reject (the task fails), with a reason for the record.",
      inputSchema: {
        type: 'object',
        properties: {
          workflow: workflowArgument,
          executionId: executionArgument,
          approval: {
            type: 'string',
            description: 'The approval id, or the name of the task waiting for it.',
          },
          decision: { type: 'string', enum: ['approve', 'reject'] },
          reason: { type: 'string', maxLength: 2000, description: 'Why, for the record.' },
          inputs: {
            type: 'object',
            description: "The values the approval's form declares (approve only).",
          },
        },
        required: ['workflow', 'executionId', 'approval', 'decision'],
        additionalProperties: false,
      },
      annotations: changing,
    },
    async call(trellis, args) {
      const decision = text(args, 'decision');
      if (decision !== 'approve' && decision !== 'reject') {
        throw new ToolError('"decision" must be approve or reject.');
      }
      const workflowId = await workflowIdOf(trellis, text(args, 'workflow'));
      const executionId = text(args, 'executionId');
      const approvalId = await approvalIdOf(
        trellis,
        { workflowId, executionId },
        text(args, 'approval'),
      );
      const reason = optionalText(args, 'reason');
      const { inputs } = args;
      const { messages } = await trellis.envelope.POST(
        `/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/${decision}`,
        {
          params: { path: { workflowId, executionId, approvalId } },
          body: {
            ...(reason === undefined ? {} : { reason }),
            ...(inputs === undefined ? {} : { inputs: inputs as Record<string, unknown> }),
          },
        },
      );
      return { approvalId, decision, messages };
    },
  },
];
