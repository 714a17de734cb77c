// The walk-through of the generated clients' check (scripts/contract/generated-clients.sh),
// through a TypeScript client that openapi-generator's typescript-fetch generates from
// generated/openapi.yaml into ./trellis, as a partner team would: nothing hand-written about the
// API. It runs against a real Trellis (TRELLIS_URL, TRELLIS_USER, TRELLIS_PASSWORD) with Node's
// own fetch, and exits non-zero at the first surprise.
import { randomUUID } from 'node:crypto';
import {
  APIKeysApi,
  Configuration,
  ConfigurationsApi,
  ErrorEnvelopeFromJSON,
  ExecutionsApi,
  PluginsApi,
  ProjectsApi,
  ResponseError,
  Role,
  SystemApi,
  TriggersApi,
  WorkflowsApi,
  type DefinitionWorkflowDefinition,
  type ErrorEnvelope,
  type ExecutionDetail,
  type ExecutionStatus,
  type PluginDetail,
} from './trellis';

const url = process.env.TRELLIS_URL!;

function check(ok: boolean, message: string): asserts ok {
  if (!ok) throw new Error(message);
}

function apis(configuration: Configuration) {
  return {
    system: new SystemApi(configuration),
    plugins: new PluginsApi(configuration),
    configurations: new ConfigurationsApi(configuration),
    workflows: new WorkflowsApi(configuration),
    triggers: new TriggersApi(configuration),
    executions: new ExecutionsApi(configuration),
    projects: new ProjectsApi(configuration),
    keys: new APIKeysApi(configuration),
  };
}
type Apis = ReturnType<typeof apis>;

const admin = apis(
  new Configuration({
    basePath: url,
    username: process.env.TRELLIS_USER!,
    password: process.env.TRELLIS_PASSWORD!,
  }),
);

async function plugins(): Promise<void> {
  const all = (await admin.plugins.listPlugins({})).data;
  const delay = all.find((plugin) => plugin.type === 'Flow/Delay');
  check(delay !== undefined, `Flow/Delay is not among ${all.length} plugins`);

  const byType = (await admin.plugins.listPluginsByType({ group: 'Flow', name: 'Delay' })).data;
  check(byType[0]?.type === 'Flow/Delay', `by type: ${JSON.stringify(byType)}`);

  // One path answers one plugin for an id and a list for a group: the client tells them apart.
  const one = (await admin.plugins.getPluginOrListByType({ pluginIdOrType: delay.id })).data;
  check(!Array.isArray(one) && one.type === 'Flow/Delay', `by id: ${JSON.stringify(one)}`);
  const group = (await admin.plugins.getPluginOrListByType({ pluginIdOrType: 'Flow' })).data;
  check(
    Array.isArray(group) && group.some((plugin: PluginDetail) => plugin.type === 'Flow/Log'),
    `by group: ${JSON.stringify(group)}`,
  );
}

async function configurations(): Promise<string> {
  const name = `storage-${randomUUID().slice(0, 8)}`;
  const write = (folder: string) => ({
    name,
    type: 'Storage/Local',
    version: '1.0.0',
    specifications: { folder },
  });
  const { id } = (
    await admin.configurations.createConfiguration({ configurationWrite: write('walkthrough') })
  ).data;
  const read = (await admin.configurations.getConfiguration({ configId: id })).data;
  check(
    read.name === name && read.type === 'Storage/Local',
    `configuration ${JSON.stringify(read)}`,
  );
  await admin.configurations.updateConfiguration({
    configId: id,
    configurationWrite: write('walkthrough-2'),
  });
  const listed = (await admin.configurations.listConfigurations({})).data;
  check(
    listed.some((configuration) => configuration.name === name),
    `${name} is not listed`,
  );
  return id;
}

/** The README's walk-through workflow: a delay, a step that waits for a person, a greeting. */
function hello(name: string): DefinitionWorkflowDefinition {
  return {
    name,
    variables: { who: 'world' },
    outputs: { greeting: "$[Outputs('Greet').message]" },
    tasks: [
      { name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 300 } },
      {
        name: 'Approve',
        type: { plugin: 'Flow/Log' },
        dependencies: ['Wait'],
        parameters: { message: 'approved' },
        manualApproval: { enabled: true, comment: 'Go ahead?' },
      },
      {
        name: 'Greet',
        type: { plugin: 'Flow/Log' },
        dependencies: ['Approve'],
        parameters: { message: "Hello, $[Variables('who')]!" },
      },
    ],
  };
}

async function workflows(): Promise<string> {
  const name = `Hello ${randomUUID().slice(0, 8)}`;
  const created = (
    await admin.workflows.addWorkflow({ workflowWrite: { definition: hello(name) } })
  ).data;
  check(created.name === name, `added ${JSON.stringify(created)}`);
  const stored = (await admin.workflows.getWorkflow({ workflowId: created.id })).data;
  check(stored.workflow.includes('"Greet"'), `stored definition: ${stored.workflow}`);

  // An update as the seed has it: the definition as JSON text.
  await admin.workflows.updateWorkflow({
    workflowId: created.id,
    workflowUpdate: { definition: stored.workflow.replace(name, `${name} (2)`) },
  });
  const listed = (await admin.workflows.listWorkflows({})).data;
  check(
    listed.some(
      (workflow) =>
        workflow.id === created.id && workflow.name === `${name} (2)` && workflow.revision === 2,
    ),
    `workflow ${created.id} at revision 2 is not listed`,
  );
  return created.id;
}

async function triggers(workflowId: string): Promise<void> {
  const manual = (
    await admin.triggers.createTrigger({
      workflowId,
      triggerCreate: { type: 'Manual', status: 'Active', properties: {} },
    })
  ).data.triggerId;
  const timed = (
    await admin.triggers.createTrigger({
      workflowId,
      triggerCreate: {
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 6 * * 1', timezone: 'Europe/Paris' },
      },
    })
  ).data.triggerId;
  const ids = (await admin.triggers.listTriggers({ workflowId })).data.map((trigger) => trigger.id);
  check(ids.includes(manual) && ids.includes(timed), `triggers ${ids.join(', ')}`);
  await admin.triggers.getTrigger({ workflowId, triggerId: timed });
  for (const triggerId of [manual, timed]) {
    await admin.triggers.deleteTrigger({ workflowId, triggerId });
  }
}

/** Polls the execution until its status is one of `statuses`. */
async function waitFor(
  workflowId: string,
  executionId: string,
  statuses: ExecutionStatus[],
): Promise<ExecutionDetail> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const detail = (await admin.executions.getExecution({ workflowId, executionId })).data;
    if (statuses.includes(detail.status)) return detail;
    check(Date.now() < deadline, `execution ${executionId} stayed ${detail.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function runWithApproval(workflowId: string): Promise<string> {
  const { executionId } = (
    await admin.executions.executeWorkflow({ workflowId, executeWorkflowRequest: {} })
  ).data;
  await waitFor(workflowId, executionId, ['Paused']);

  const pending = (await admin.executions.listApprovals({ workflowId, executionId })).data;
  check(
    pending.length === 1 && pending[0]!.taskName === 'Approve' && pending[0]!.status === 'Pending',
    `approvals ${JSON.stringify(pending)}`,
  );
  await admin.executions.approveApproval({
    workflowId,
    executionId,
    approvalId: pending[0]!.id,
    approvalDecisionRequest: { reason: 'Looks right.' },
  });

  const final = await waitFor(workflowId, executionId, ['Completed', 'Failed', 'Canceled']);
  check(final.status === 'Completed', `the run ended ${final.status}: ${final.message}`);
  check(final.outputs?.greeting === 'Hello, world!', `outputs ${JSON.stringify(final.outputs)}`);

  const tasks = (await admin.executions.listExecutionTasks({ workflowId, executionId })).data;
  check(
    tasks.map((task) => `${task.name} ${task.status}`).join(', ') ===
      'Wait Completed, Approve Completed, Greet Completed',
    `tasks ${JSON.stringify(tasks)}`,
  );
  const greet = tasks.find((task) => task.name === 'Greet')!.id;
  const task = (
    await admin.executions.getExecutionTask({ workflowId, executionId, taskExecutionId: greet })
  ).data;
  check(
    (task.output as { message?: string } | null)?.message === 'Hello, world!',
    `Greet's output ${JSON.stringify(task.output)}`,
  );
  const taskLogs = (
    await admin.executions.listTaskLogs({ workflowId, executionId, taskExecutionId: greet })
  ).data;
  check(
    taskLogs.some((entry) => entry.message.includes('Hello, world!')),
    "Greet's log does not say hello",
  );
  const runLogs = (await admin.executions.listExecutionLogs({ workflowId, executionId })).data;
  check(runLogs.length > 0, 'the run wrote no log entry');
  return executionId;
}

async function cancelRun(): Promise<void> {
  const name = `Long ${randomUUID().slice(0, 8)}`;
  const text = JSON.stringify({
    name,
    tasks: [{ name: 'Sleep', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 60000 } }],
  });
  const workflowId = (await admin.workflows.addWorkflow({ workflowWrite: { definition: text } }))
    .data.id;
  const { executionId } = (
    await admin.executions.executeWorkflow({ workflowId, executeWorkflowRequest: {} })
  ).data;
  await waitFor(workflowId, executionId, ['Running']);
  await admin.executions.cancelExecution({ workflowId, executionId });
  await waitFor(workflowId, executionId, ['Canceled']);
  await admin.workflows.deleteWorkflow({ workflowId });
}

/** The refusal a call ends in, read as the typed error envelope. */
async function refusal(call: Promise<unknown>, status: number): Promise<ErrorEnvelope> {
  try {
    await call;
  } catch (error) {
    check(error instanceof ResponseError, `not a refusal: ${String(error)}`);
    check(error.response.status === status, `status ${error.response.status}, wanted ${status}`);
    const envelope = ErrorEnvelopeFromJSON(await error.response.json());
    check(
      !envelope.succeeded && envelope.messages.length > 0,
      `envelope ${JSON.stringify(envelope)}`,
    );
    return envelope;
  }
  throw new Error(`answered 2xx, wanted ${status}`);
}

async function errors(): Promise<void> {
  const bad = JSON.stringify({
    name: 'Bad',
    tasks: [{ name: 'A', type: { plugin: 'Flow/Lgo' } }],
  });
  const invalid = await refusal(
    admin.workflows.addWorkflow({ workflowWrite: { definition: bad } }),
    400,
  );
  check(invalid.errors[0]?.code === 'validation.invalid', `400 ${JSON.stringify(invalid.errors)}`);
  check(
    invalid.errors[0]?.suggestions?.includes('Flow/Log') === true,
    `no suggestion: ${JSON.stringify(invalid.errors)}`,
  );

  const stranger = apis(
    new Configuration({ basePath: url, username: 'nobody', password: 'wrong-password' }),
  );
  const unauthenticated = await refusal(stranger.workflows.listWorkflows({}), 401);
  check(unauthenticated.errors[0]?.code === 'auth.unauthenticated', '401 code');

  // A key with the config role only may not add workflows.
  const project = (
    await admin.projects.createProject({
      projectWrite: { name: `ts-${randomUUID().slice(0, 8)}` },
    })
  ).data;
  const { key } = (
    await admin.keys.createApiKey({
      projectId: project.id,
      apiKeyWrite: { name: 'ci', roles: [Role.Config] },
    })
  ).data;
  const keyed = apis(new Configuration({ basePath: url, accessToken: key }));
  const forbidden = await refusal(
    keyed.workflows.addWorkflow({ workflowWrite: { definition: bad } }),
    403,
  );
  check(forbidden.errors[0]?.code === 'auth.forbidden', '403 code');

  const missing = await refusal(admin.workflows.getWorkflow({ workflowId: randomUUID() }), 404);
  check(missing.errors[0]?.code === 'workflow.not_found', '404 code');
}

async function walk(): Promise<void> {
  const { version } = (await admin.system.getVersion()).data;
  check(version !== '', 'no version');
  console.log(`Trellis ${version} at ${url}`);
  await plugins();
  const configurationId = await configurations();
  const workflowId = await workflows();
  await triggers(workflowId);
  const executionId = await runWithApproval(workflowId);
  await cancelRun();
  await errors();
  await admin.configurations.deleteConfiguration({ configId: configurationId });
  await admin.workflows.deleteWorkflow({ workflowId });
  await refusal(admin.workflows.getWorkflow({ workflowId }), 404);
  console.log(`TypeScript walk-through passed: workflow ${workflowId}, execution ${executionId}`);
}

walk().catch((error: unknown) => {
  console.error('TypeScript walk-through FAILED:', error);
  process.exit(1);
});
