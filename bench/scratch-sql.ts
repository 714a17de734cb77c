import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { startBenchEnvironment } from './environment.js';
import { chainDefinition, uniqueWorkflowName } from '../test/resilience/support/workload.js';
import { executionWorkflowId } from '#protocol/ids.js';

const env = await startBenchEnvironment({});
const created = await env.admin.POST('/workflows/Add', { body: { definition: JSON.stringify(chainDefinition(uniqueWorkflowName('s'), ['noop', 'noop', 'noop'])) } });
const run = async () => {
  const started = await env.admin.POST('/workflows/{workflowId}/executions', { params: { path: { workflowId: created.id } }, body: { workflowId: created.id } });
  await env.temporal.workflow.getHandle(executionWorkflowId(started.executionId)).result();
};
await run();
await run();
await sql`alter system set log_statement = 'all'`.execute(env.db);
await sql`select pg_reload_conf()`.execute(env.db);
await new Promise((r) => setTimeout(r, 500));
await sql`select 'MARK-START'`.execute(env.db);
await run();
await new Promise((r) => setTimeout(r, 500));
await sql`select 'MARK-END'`.execute(env.db);
const dirs = readdirSync(tmpdir()).filter((d) => d.startsWith('trellis-pg-')).map((d) => path.join(tmpdir(), d)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
const log = readFileSync(path.join(dirs[0]!, 'log'), 'utf8');
console.log(log.slice(log.indexOf('MARK-START'), log.indexOf('MARK-END')));
await env.stop();
