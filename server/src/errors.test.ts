import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { Conflict, Invalid, NotFound, Unavailable } from '#definition/errors.js';
import { createLogger } from '#platform/logging.js';
import { renderErrors } from './errors.js';
import { HttpError } from './http-error.js';

/** A tiny app whose routes throw, behind the real error renderer, on a real socket. */
async function serve(lines: string[]) {
  const logger = createLogger(
    { Level: 'info' },
    {},
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const app = express();
  app.get('/bug', () => {
    throw new TypeError('secret internals at /srv/app.ts:42');
  });
  app.get('/conflict', () => {
    throw new HttpError(409, ['first', 'second'], { 'Retry-After': '1' });
  });
  const domainErrors = {
    invalid: new Invalid(['body.name: is required', 'body.tasks: must be an array']),
    'not-found': new NotFound('Workflow "x" was not found.'),
    conflict: new Conflict('A workflow named "x" already exists'),
    unavailable: new Unavailable('Temporal is unavailable: down'),
  };
  for (const [path, error] of Object.entries(domainErrors)) {
    app.get(`/domain/${path}`, () => {
      throw error;
    });
  }
  app.use(renderErrors(logger, 1024));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => server.close() };
}

describe('renderErrors', () => {
  it('renders unknown errors as 500 with an id and no stack, and logs the stack under that id', async () => {
    const lines: string[] = [];
    const { url, close } = await serve(lines);
    try {
      const response = await fetch(`${url}/bug`);
      expect(response.status).toBe(500);
      const body = (await response.json()) as {
        data: null;
        messages: string[];
        succeeded: boolean;
      };
      expect(body).toMatchObject({ data: null, succeeded: false });
      const id = /^Internal error \(id ([0-9a-f-]{36})\)\.$/.exec(body.messages[0] ?? '')?.[1];
      expect(id).toBeDefined();
      expect(JSON.stringify(body)).not.toContain('secret internals');
      const logged = lines.join('\n');
      expect(logged).toContain(id!);
      expect(logged).toContain('TypeError');
      expect(logged).toContain('secret internals');
    } finally {
      close();
    }
  });

  it('renders an HttpError with its status, every message and its headers', async () => {
    const { url, close } = await serve([]);
    try {
      const response = await fetch(`${url}/conflict`);
      expect(response.status).toBe(409);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({
        data: null,
        messages: ['first', 'second'],
        succeeded: false,
      });
    } finally {
      close();
    }
  });

  it('maps each kind of domain error to its status, with every message', async () => {
    const { url, close } = await serve([]);
    try {
      const answers = [];
      for (const path of ['invalid', 'not-found', 'conflict', 'unavailable']) {
        const response = await fetch(`${url}/domain/${path}`);
        const body = (await response.json()) as { messages: string[]; succeeded: boolean };
        answers.push([response.status, body.succeeded, body.messages]);
      }
      expect(answers).toEqual([
        [400, false, ['body.name: is required', 'body.tasks: must be an array']],
        [404, false, ['Workflow "x" was not found.']],
        [409, false, ['A workflow named "x" already exists']],
        [503, false, ['Temporal is unavailable: down']],
      ]);
    } finally {
      close();
    }
  });
});
