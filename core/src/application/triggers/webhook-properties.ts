/**
 * A Webhook trigger's properties: `signature` (`StandardWebhooks` or `None`) and, with
 * `StandardWebhooks`, the signing `secret` in the Standard Webhooks form (`whsec_` and the base64
 * of 24 to 64 random bytes). Keys are read case-insensitively, as every trigger property is.
 */
import { randomBytes } from 'node:crypto';
import { REDACTED } from '#plugin-host/settings.js';
import { propertyValue } from './schedule-policies.js';
import { formatPath, type PathSegment } from '#definition/validation/path.js';
import { problemAt, type Problem } from '#definition/validation/problem.js';

export const webhookSignatures = ['StandardWebhooks', 'None'] as const;
export type WebhookSignature = (typeof webhookSignatures)[number];

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new signing secret: 32 random bytes, as Standard Webhooks writes secrets. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** What the properties say of the secret. */
export type SecretProperty =
  /** None given (or `"********"`, as GET shows a stored one): keep what is stored. */
  { kind: 'absent' } | { kind: 'given'; secret: string };

/** The properties as stored: every key but the secret, which is kept (encrypted) on its own. */
export function withoutSecret(properties: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(properties).filter(([key]) => key.toLowerCase() !== 'secret'),
  );
}

/**
 * The signature and secret a Webhook trigger's properties give, or one problem each:
 * `signature` is required; `secret`, when given, must be a Standard Webhooks secret and goes
 * only with `StandardWebhooks`. `at` is where the properties are (`body.properties`).
 */
export function checkWebhookProperties(
  properties: Record<string, unknown>,
  at: readonly PathSegment[] = ['properties'],
):
  | { ok: true; signature: WebhookSignature; secret: SecretProperty }
  | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const signatureAt = formatPath([...at, 'signature']);
  const secretAt = formatPath([...at, 'secret']);
  const signature = propertyValue(properties, 'signature');
  if (signature === undefined) {
    problems.push(
      problemAt(
        signatureAt,
        'is required for a Webhook trigger ("StandardWebhooks" or "None")',
        'validation.required',
      ),
    );
  } else if (!webhookSignatures.includes(signature as WebhookSignature)) {
    problems.push(
      problemAt(signatureAt, 'must be one of "StandardWebhooks", "None"', 'validation.enum'),
    );
  }
  const given = propertyValue(properties, 'secret');
  let secret: SecretProperty = { kind: 'absent' };
  if (given !== undefined && given !== REDACTED) {
    if (signature === 'None') {
      problems.push(
        problemAt(
          secretAt,
          'is not allowed with signature "None" (only "StandardWebhooks" signs)',
          'validation.unknown',
        ),
      );
    } else if (typeof given !== 'string' || !isWebhookSecret(given)) {
      problems.push(
        problemAt(
          secretAt,
          `must be "${SECRET_PREFIX}" followed by the base64 of 24 to 64 random bytes (a Standard Webhooks secret)`,
        ),
      );
    } else {
      secret = { kind: 'given', secret: given };
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, signature: signature as WebhookSignature, secret };
}

function isWebhookSecret(text: string): boolean {
  if (!text.startsWith(SECRET_PREFIX)) return false;
  const encoded = text.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}
