/**
 * The page side of test/sdk/browser.test.ts: a small app using the SDK as a browser app would,
 * bundled with it by esbuild and run in Chromium. Its scenarios hang on `globalThis.trellisPage`
 * for the test to call; each resolves to plain JSON.
 */
import {
  createTrellisClient,
  defineWorkflow,
  type ExecutionDetail,
  type ExecutionEvent,
  type TrellisClient,
} from '../../sdk/src/index.js';

/** Where the API is and whom to log in as (Basic). */
export interface Login {
  baseUrl: string;
  username: string;
  password: string;
}

/** A run followed to its end, and what `waitForExecution` answered meanwhile. */
export interface FollowedRun {
  executionId: string;
  events: ExecutionEvent[];
  waited: ExecutionDetail;
}

/** A watch aborted mid-run, resumed after the last event it saw, and the whole stream read again. */
export interface ResumedRun {
  before: ExecutionEvent[];
  abortedWith: string;
  after: ExecutionEvent[];
  whole: ExecutionEvent[];
}

/** Why a call failed, as far as the page can tell. */
export interface Failure {
  name: string;
  message: string;
}

const client = ({ baseUrl, username, password }: Login) =>
  createTrellisClient({ baseUrl, basic: { username, password } });

/** Delays with logs between: a run long enough to watch live and to interrupt. */
async function startRun(trellis: TrellisClient, delayMs: number) {
  const name = `browser-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const definition = defineWorkflow({
    name,
    tasks: [
      { name: 'Wait1', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: delayMs } },
      {
        name: 'Say1',
        type: { plugin: 'Flow/Log' },
        parameters: { message: 'first' },
        dependencies: ['Wait1'],
      },
      {
        name: 'Wait2',
        type: { plugin: 'Flow/Delay' },
        parameters: { milliseconds: delayMs },
        dependencies: ['Say1'],
      },
      {
        name: 'Say2',
        type: { plugin: 'Flow/Log' },
        parameters: { message: 'second' },
        dependencies: ['Wait2'],
      },
    ],
  });
  const { id: workflowId } = await trellis.POST('/workflows/Add', { body: { definition } });
  const { executionId } = await trellis.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  return { workflowId, executionId };
}

async function collect(events: AsyncIterable<ExecutionEvent>): Promise<ExecutionEvent[]> {
  const seen: ExecutionEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const page = {
  /** Starts a run and follows it with `watchExecution` while `waitForExecution` waits for it. */
  async followRun(login: Login, delayMs: number): Promise<FollowedRun> {
    const trellis = client(login);
    const { workflowId, executionId } = await startRun(trellis, delayMs);
    const waited = trellis.waitForExecution(workflowId, executionId, { timeoutMs: 20_000 });
    const events = await collect(trellis.watchExecution(workflowId, executionId));
    return { executionId, events, waited: await waited };
  },

  /** Stops watching once the first task runs, then watches again `after` the last event seen. */
  async resumeRun(login: Login, delayMs: number): Promise<ResumedRun> {
    const trellis = client(login);
    const { workflowId, executionId } = await startRun(trellis, delayMs);
    const stop = new AbortController();
    const before: ExecutionEvent[] = [];
    let abortedWith = 'not aborted';
    try {
      for await (const event of trellis.watchExecution(workflowId, executionId, {
        signal: stop.signal,
      })) {
        before.push(event);
        if (
          event.event === 'task' &&
          event.data.name === 'Wait1' &&
          event.data.status === 'Running'
        )
          stop.abort();
      }
    } catch (error) {
      abortedWith = error instanceof Error ? error.name : String(error);
    }
    const resumedAfter = before.at(-1)?.id;
    const after = await collect(
      trellis.watchExecution(workflowId, executionId, { after: resumedAfter }),
    );
    const whole = await collect(trellis.watchExecution(workflowId, executionId));
    return { before, abortedWith, after, whole };
  },

  /** Lists workflows; from an origin the API does not allow, the browser refuses the answer. */
  async listWorkflows(login: Login): Promise<Failure | { count: number }> {
    try {
      const workflows = await client(login).GET('/workflows');
      return { count: workflows.length };
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      return { name, message };
    }
  },
};

export type TrellisPage = typeof page;

(globalThis as { trellisPage?: TrellisPage }).trellisPage = page;
