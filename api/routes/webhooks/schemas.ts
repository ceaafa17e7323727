// The request of POST /api/webhooks/{token}: its token, signature headers and inputs.
import { z } from 'zod';
import { SIGNATURE_EXAMPLE, TOKEN_EXAMPLE } from './examples.ts';

/** The body: a JSON object whose fields are the workflow's inputs (an empty body is no inputs). */
export const webhookInputs = z
  .record(z.string(), z.unknown())
  .describe('The workflow inputs: a JSON object (or form fields); an empty body is `{}`');

export const webhookPath = z.object({
  token: z.string().min(1).meta({
    description: 'The secret token of the webhook, from its URL (shown once, by webhooks.create)',
    example: TOKEN_EXAMPLE,
  }),
});

const signature = z
  .string()
  .regex(/^sha256=[0-9a-fA-F]{64}$/)
  .optional();

export const signatureHeaders = z.object({
  'X-Webhook-Signature': signature.meta({
    description:
      'Required when the webhook has a secret: `sha256=` and the hex HMAC-SHA256, under the secret, of ' +
      'the raw body bytes, or of `{timestamp}.{body}` when X-Webhook-Timestamp is sent',
    example: SIGNATURE_EXAMPLE,
  }),
  'X-Hub-Signature-256': signature.meta({
    description: "GitHub's name for the same signature, read when X-Webhook-Signature is absent",
    example: SIGNATURE_EXAMPLE,
  }),
  'X-Webhook-Timestamp': z
    .string()
    .regex(/^\d{1,12}$/)
    .optional()
    .meta({
      description:
        'Optional replay protection: the Unix time in seconds at signing, covered by the signature ' +
        '(`{timestamp}.{body}`); refused more than 5 minutes from the server time',
      example: '1768469400',
    }),
});

export const formFields = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .meta({ description: 'Form fields as string inputs; a repeated field becomes a list of strings' });
