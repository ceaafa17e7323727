// Reading and checking an inbound webhook call: its inputs (a JSON object, or form fields), and its
// HMAC-SHA256 signature when the webhook has a secret.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { issuesOf, ServiceError } from '../../../errors.ts';
import { jsonValueOf, refuseUnstorable, utf8Text } from '../../middleware/validate.ts';
import { webhookInputs } from './schemas.ts';

/** The signature header: `sha256=` and the hex HMAC-SHA256 of the signed payload under the secret. */
export const SIGNATURE_HEADER = 'X-Webhook-Signature';
/** GitHub's name for the same signature, accepted so a GitHub webhook can point here unchanged. */
export const GITHUB_SIGNATURE_HEADER = 'X-Hub-Signature-256';
/** Optional Unix seconds; when sent, the signed payload is `${timestamp}.${body}`. */
export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
/** How far a signed timestamp may be from the server's time, either way. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const UNIX_SECONDS = /^\d{1,12}$/;
/** A run of percent-encoded bytes in form fields. */
const PERCENT_ENCODED = /(?:%[0-9a-f]{2})+/gi;

/** The inputs a body carries: a JSON object, or form fields as strings (a repeated field as a list). */
export function inputsOf(contentType: string, raw: Uint8Array): Record<string, unknown> {
  const text = utf8Text(raw);
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    // URLSearchParams turns percent-encoded bytes that are not UTF-8 into U+FFFD: refused instead,
    // as invalid UTF-8 in a JSON body is.
    for (const run of text.match(PERCENT_ENCODED) ?? [])
      try {
        decodeURIComponent(run);
      } catch {
        throw new ServiceError(400, 'Form fields are not percent-encoded UTF-8');
      }
    // A Map, then own properties: a field named __proto__ is an input like any other.
    const fields = new Map<string, string | string[]>();
    for (const [name, value] of new URLSearchParams(text)) {
      const seen = fields.get(name);
      fields.set(name, seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]);
    }
    // Percent-decoding can yield a NUL or a lone surrogate, which no stored inputs may hold.
    const inputs = Object.fromEntries(fields);
    refuseUnstorable(inputs);
    return inputs;
  }
  const parsed = webhookInputs.safeParse(jsonValueOf(text));
  if (!parsed.success)
    throw new ServiceError(400, 'The body must be a JSON object of workflow inputs', {
      details: issuesOf(parsed.error),
    });
  return parsed.data;
}

/** Refuses the call (401) unless it carries the HMAC-SHA256 of its raw body under the webhook's secret. */
export function verifySignature(c: Context, secret: string, raw: Uint8Array, now: Date): void {
  const given = c.req.header(SIGNATURE_HEADER) ?? c.req.header(GITHUB_SIGNATURE_HEADER);
  if (given === undefined)
    throw new ServiceError(
      401,
      `Missing signature: send ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the body under the webhook's secret>`,
    );
  const timestamp = c.req.header(TIMESTAMP_HEADER);
  if (timestamp !== undefined && !UNIX_SECONDS.test(timestamp))
    throw new ServiceError(401, `Invalid ${TIMESTAMP_HEADER}: send the time in Unix seconds`);
  const hmac = createHmac('sha256', secret);
  // With a timestamp the signature covers it too, so an old call cannot be replayed with a new one.
  if (timestamp !== undefined) hmac.update(`${timestamp}.`);
  const expected = hmac.update(raw).digest();
  const hex = SIGNATURE.exec(given.trim())?.[1];
  if (!hex || !timingSafeEqual(Buffer.from(hex, 'hex'), expected))
    throw new ServiceError(401, 'Invalid signature');
  if (
    timestamp !== undefined &&
    Math.abs(now.getTime() / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS
  )
    throw new ServiceError(
      401,
      `${TIMESTAMP_HEADER} is more than ${TIMESTAMP_TOLERANCE_SECONDS / 60} minutes from the server's time`,
    );
}
