/**
 * `trellis triggers list|rotate-secret|deliveries`, the real command against a real Trellis: a
 * workflow's triggers, a webhook secret rotated and printed once (the old one then refused, the
 * new one accepted), and the delivery log paged with `--after`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow, definition } from '../support/engine-support.js';
import { runCli, uniqueName, type CliResult } from '../support/cli.js';
import { postSignedWebhook } from '../support/webhook-signing.js';

let trellis: Trellis;
let env: Record<string, string>;

beforeAll(async () => {
  trellis = await startTrellis();
  env = {
    TRELLIS_URL: trellis.baseUrl,
    TRELLIS_USER: users.admin.username,
    TRELLIS_PASSWORD: users.admin.password,
  };
});
afterAll(async () => {
  await trellis?.stop();
});

const trellisCli = (args: string[]) => runCli(args, { env });
const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

/** A workflow with a Webhook trigger that signs and a schedule; their ids and the secret. */
async function workflowWithTriggers() {
  const name = uniqueName('Hooked');
  const workflowId = await addWorkflow(
    trellis.admin,
    definition([{ name: 'Greet', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }], {
      name,
    }),
  );
  const create = (type: 'Webhook' | 'TimeBased', properties: Record<string, unknown>) =>
    trellis.admin.envelope.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type, status: 'Active', properties } as never,
    });
  const hook = (await create('Webhook', { signature: 'StandardWebhooks' })).data;
  const schedule = (await create('TimeBased', { cron: '0 6 * * *' })).data;
  return {
    name,
    workflowId,
    hookId: hook.triggerId,
    secret: hook.secret!,
    scheduleId: schedule.triggerId,
  };
}

describe('trellis triggers', () => {
  it('lists a workflow’s triggers with their setting, never a secret', async () => {
    const { name, hookId, scheduleId, secret } = await workflowWithTriggers();
    const listed = await trellisCli(['triggers', 'list', name]);
    expect(listed.code, printed(listed)).toBe(0);
    const hookRow = lines(listed.stdout).find((line) => line.includes(hookId));
    const scheduleRow = lines(listed.stdout).find((line) => line.includes(scheduleId));
    expect(hookRow).toMatch(/Webhook\s+Active\s+signature StandardWebhooks/);
    expect(scheduleRow).toMatch(/TimeBased\s+Active\s+0 6 \* \* \*/);
    expect(listed.stdout).not.toContain(secret);

    const asJson = await trellisCli(['triggers', 'list', name, '--json']);
    expect(asJson.code, printed(asJson)).toBe(0);
    const triggers = JSON.parse(asJson.stdout) as { id: string; properties: object }[];
    expect(triggers.map((trigger) => trigger.id).sort()).toEqual([hookId, scheduleId].sort());
    expect(triggers.find((trigger) => trigger.id === hookId)!.properties).toEqual({
      signature: 'StandardWebhooks',
      secret: '********',
    });

    const bare = uniqueName('Bare');
    await addWorkflow(
      trellis.admin,
      definition([{ name: 'Only', type: { plugin: 'Flow/NoOp' } }], { name: bare }),
    );
    const none = await trellisCli(['triggers', 'list', bare]);
    expect(none.code, printed(none)).toBe(0);
    expect(none.stdout).toBe('No triggers.\n');
    const unknown = await trellisCli(['triggers', 'list', uniqueName('Nowhere')]);
    expect(unknown.code, printed(unknown)).toBe(1);
  });

  it('rotates a webhook’s secret, printing it once on stdout with a note on stderr', async () => {
    const { name, hookId, secret, scheduleId } = await workflowWithTriggers();
    const rotated = await trellisCli(['triggers', 'rotate-secret', name, hookId]);
    expect(rotated.code, printed(rotated)).toBe(0);
    const [newSecret, ...rest] = lines(rotated.stdout);
    expect(rest).toEqual([]);
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newSecret).not.toBe(secret);
    expect(rotated.stderr).toMatch(/shown only this once/);

    const old = await postSignedWebhook(trellis.baseUrl, hookId, secret, {});
    expect(old.status).toBe(401);
    const fresh = await postSignedWebhook(trellis.baseUrl, hookId, newSecret!, {});
    expect(fresh.status).toBe(202);

    const unsigned = await trellisCli(['triggers', 'rotate-secret', name, scheduleId]);
    expect(unsigned.code, printed(unsigned)).toBe(1);
    expect(unsigned.stderr).toMatch(/has no signing secret to rotate/);
    expect(unsigned.stdout).toBe('');
    const notAnId = await trellisCli(['triggers', 'rotate-secret', name, 'nightly']);
    expect(notAnId.code, printed(notAnId)).toBe(2);
    expect(notAnId.stderr).toMatch(/"nightly" is not a trigger id/);
  });

  it('pages the delivery log, accepted and refused, with --limit and --after', async () => {
    const { name, hookId, secret, scheduleId } = await workflowWithTriggers();
    const empty = await trellisCli(['triggers', 'deliveries', name, hookId]);
    expect(empty.code, printed(empty)).toBe(0);
    expect(empty.stdout).toMatch(/No deliveries yet\./);

    const accepted = await postSignedWebhook(trellis.baseUrl, hookId, secret, {});
    expect(accepted.status).toBe(202);
    const refused = await postSignedWebhook(
      trellis.baseUrl,
      hookId,
      `whsec_${'A'.repeat(43)}=`,
      {},
    );
    expect(refused.status).toBe(401);

    const first = await trellisCli(['triggers', 'deliveries', name, hookId, '--limit', '1']);
    expect(first.code, printed(first)).toBe(0);
    const firstRows = lines(first.stdout);
    expect(firstRows.some((line) => /Refused 401\s+webhook\.signature_invalid/.test(line))).toBe(
      true,
    );
    expect(first.stdout).not.toContain(accepted.webhookId);
    const more = /More with --after (\S+)\./.exec(first.stdout);
    expect(more, printed(first)).not.toBeNull();

    const next = await trellisCli([
      'triggers',
      'deliveries',
      name,
      hookId,
      '--after',
      more![1]!,
      '--json',
    ]);
    expect(next.code, printed(next)).toBe(0);
    expect(JSON.parse(next.stdout)).toEqual([
      expect.objectContaining({
        id: accepted.webhookId,
        outcome: 'Accepted',
        executionId: accepted.body.data!.executionId,
      }),
    ]);

    const notWebhook = await trellisCli(['triggers', 'deliveries', name, scheduleId]);
    expect(notWebhook.code, printed(notWebhook)).toBe(1);
    expect(notWebhook.stderr).toMatch(/only a Webhook trigger receives deliveries/);
  });
});
