/**
 * Issue 18: authentication resists abuse (Security.RateLimits). Failed logins lock a user name,
 * and, at a higher count, a client address; a user's requests a minute are bounded; a lock holds
 * across API processes, since the failures are counted in PostgreSQL.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { createTestDatabase } from '../support/services.js';

const started: Trellis[] = [];
afterAll(async () => {
  for (const trellis of started) await trellis.stop();
});

/** A Trellis whose warn lines are kept in `warnings`. */
async function start(rateLimits: object, options: { databaseUrl?: string; server?: object } = {}) {
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const record = JSON.parse(line) as { level: string; msg: string };
        if (record.level === 'warn') warnings.push(record.msg);
      }
      done();
    },
  });
  const trellis = await startTrellis({
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    logger: createLogger({ Level: 'warn' }, {}, sink),
    config: {
      Security: {
        RateLimits: { FailedLoginsPerUser: 5, FailedLoginsPerAddress: 50, ...rateLimits },
      },
      ...(options.server ? { Server: options.server } : {}),
    },
  });
  started.push(trellis);
  return { trellis, warnings };
}

/** `GET /workflows` as `name`:`password`, optionally as forwarded for `forwardedFor`. */
async function list(trellis: Trellis, name: string, password: string, forwardedFor?: string) {
  const response = await fetch(`${trellis.baseUrl}/workflows`, {
    headers: {
      authorization: basicAuthorization(name, password),
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
  });
  const body = (await response.json()) as { messages?: string[]; errors?: { code: string }[] };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
}

const { admin, workflow } = users;

describe('failed logins', () => {
  it("lock one user name for the window, the right password too, while others' requests go on", async () => {
    const { trellis, warnings } = await start({ WindowSeconds: 3 });
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await list(trellis, workflow.username, `wrong-${attempt}`)).status).toBe(401);
    }
    const locked = await list(trellis, workflow.username, workflow.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(locked.retryAfter)).toBeLessThanOrEqual(3);
    expect(locked.body.errors?.[0]?.code).toBe('auth.rate_limited');
    expect(locked.body.messages?.[0]).toMatch(
      /^Too many failed logins for user "workflow-user": logins are refused for \d s\./,
    );
    expect(warnings).toContain('too many failed logins for user:workflow-user: locked for 3 s');
    // Another user from the same address is not affected.
    expect((await list(trellis, admin.username, admin.password)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, Number(locked.retryAfter) * 1000 + 200));
    expect((await list(trellis, workflow.username, workflow.password)).status).toBe(200);
  });

  it('lock a client address after failures across names; behind a trusted proxy, per client', async () => {
    const { trellis } = await start(
      { FailedLoginsPerUser: 100, FailedLoginsPerAddress: 6, WindowSeconds: 60 },
      { server: { TrustedProxies: ['127.0.0.1'] } },
    );
    // Verified before the lock: a cached login goes on without a query.
    expect((await list(trellis, admin.username, admin.password, '10.0.0.1')).status).toBe(200);
    for (let attempt = 1; attempt <= 6; attempt++) {
      const response = await list(trellis, `nobody-${attempt}`, 'guess', '10.0.0.1');
      expect(response.status).toBe(401);
    }
    const locked = await list(trellis, workflow.username, workflow.password, '10.0.0.1');
    expect(locked.status).toBe(429);
    expect(locked.body.messages?.[0]).toMatch(/^Too many failed logins for this client address/);
    // A login verified before the lock goes on (people behind an attacker's NAT keep working).
    expect((await list(trellis, admin.username, admin.password, '10.0.0.1')).status).toBe(200);
    // Another client behind the same proxy, and the peer itself, are not locked.
    expect((await list(trellis, workflow.username, workflow.password, '10.0.0.2')).status).toBe(
      200,
    );
    expect((await list(trellis, workflow.username, workflow.password)).status).toBe(200);
  });

  it('hold across API processes sharing the database', async () => {
    const databaseUrl = await createTestDatabase();
    const { trellis: first } = await start({ WindowSeconds: 60 }, { databaseUrl });
    const { trellis: second } = await start({ WindowSeconds: 60 }, { databaseUrl });
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await list(first, workflow.username, `wrong-${attempt}`)).status).toBe(401);
    }
    expect((await list(second, workflow.username, workflow.password)).status).toBe(429);
  });
});

describe('requests a minute', () => {
  it('are bounded per user, with Retry-After, without touching other users', async () => {
    const { trellis } = await start({ RequestsPerUserPerMinute: 3 });
    for (let request = 1; request <= 3; request++) {
      expect((await list(trellis, workflow.username, workflow.password)).status).toBe(200);
    }
    const refused = await list(trellis, workflow.username, workflow.password);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.body.messages?.[0]).toMatch(
      /^Too many requests for user "workflow-user": at most 3 a minute/,
    );
    expect((await list(trellis, admin.username, admin.password)).status).toBe(200);
  });
});
