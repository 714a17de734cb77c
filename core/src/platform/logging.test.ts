import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logging.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('createLogger', () => {
  it('writes JSON lines with level names, ISO time and the bindings', () => {
    const { lines, stream } = capture();
    const logger = createLogger({ Level: 'info' }, { component: 'api' }, stream);
    logger.info({ workflowId: 'w1' }, 'started');
    logger.debug('hidden below the level');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      component: 'api',
      workflowId: 'w1',
      msg: 'started',
    });
    expect(new Date(lines[0]!.time as string).toISOString()).toBe(lines[0]!.time);
  });

  it('never writes credentials', () => {
    const { lines, stream } = capture();
    const logger = createLogger({ Level: 'trace' }, {}, stream);
    logger.info(
      { req: { headers: { authorization: 'Basic YWRtaW46cHc=' } }, user: { password: 'pw' } },
      'x',
    );
    const text = JSON.stringify(lines);
    expect(text).not.toContain('YWRtaW46cHc=');
    expect(text).not.toContain('"pw"');
  });

  it('is silent at level silent', () => {
    const { lines, stream } = capture();
    createLogger({ Level: 'silent' }, {}, stream).error('nothing');
    expect(lines).toEqual([]);
  });

  it('prints readable lines for a person with Format pretty, credentials still hidden', () => {
    let text = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const logger = createLogger({ Level: 'info', Format: 'pretty' }, { role: 'all' }, stream);
    logger.info({ address: '127.0.0.1:7233', password: 'pw' }, 'connected to Temporal');
    logger.warn('PostgreSQL is not reachable yet');
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: connected to Temporal \{"address":"127.0.0.1:7233","password":"\[redacted\]"\}$/,
    );
    expect(lines[1]).toMatch(/^\[[\d:.]+\] WARN: PostgreSQL is not reachable yet$/);
    // With a destination and Format auto (as in tests and under a process manager): JSON.
    const { lines: json, stream: jsonStream } = capture();
    createLogger({ Level: 'info', Format: 'auto' }, {}, jsonStream).info('plain');
    expect(json[0]).toMatchObject({ level: 'info', msg: 'plain' });
  });
});
