/**
 * The bytes of a webhook delivery's body as received: its signature is over them, not over the
 * JSON they parse to. The body reader keeps them for `/hooks/` requests only.
 */
const rawBodies = new WeakMap<object, Buffer>();

export function keepRawBody(req: object, body: Buffer): void {
  rawBodies.set(req, body);
}

/** The body of a `/hooks/` request as received; empty when it had none. */
export function rawBody(req: object): Buffer {
  return rawBodies.get(req) ?? Buffer.alloc(0);
}
