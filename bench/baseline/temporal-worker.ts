/**
 * The execution baselines' worker: a plain Temporal worker for `baseline/workflows.ts` on the same
 * Temporal server, with the worker options of the Trellis worker (`workflows-worker/src/worker.ts`).
 *
 *   tsx bench/baseline/temporal-worker.ts --address=<host:port> --taskQueue=<name>
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { baselineActivities } from './activities.js';
import { workerTuning } from '../../workflows-worker/src/worker.js';
import { announceReady, requiredArguments } from './arguments.js';

const args = requiredArguments(['address', 'taskQueue']);
const connection = await NativeConnection.connect({ address: args.address });
const worker = await Worker.create({
  connection,
  namespace: 'default',
  taskQueue: args.taskQueue,
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities: baselineActivities,
  // The same options as our worker, so only the work done differs.
  ...workerTuning,
});
const running = worker.run();
announceReady({ taskQueue: args.taskQueue });
// The Temporal runtime shuts the worker down on SIGTERM/SIGINT; then `run()` resolves.
await running;
await connection.close();
