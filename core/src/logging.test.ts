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
});
