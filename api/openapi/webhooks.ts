// OpenAPI: POST /api/webhooks/{token}, an inbound webhook. No API key: the token in the URL (made by
// the admin plane's webhooks.create) names the webhook; a webhook with a secret needs a signature.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { webhookInputs } from '../routes/webhooks.ts';
import { finishedExamples, queuedOrRunningExamples } from '../routes/workflows/examples.ts';
import {
  accepted,
  stillRunning,
  completed as syncCompleted,
  failed as syncFailed,
} from '../routes/workflows/schemas.ts';
import { errors, ok } from './components.ts';

const TOKEN_EXAMPLE = 'Zk3v9Qm2Xr7TbLw4Hn8Ps1Dc6Yf0Ue5Ja2Kg9Vo3Ri7';
const SIGNATURE_EXAMPLE = 'sha256=5d41402abc4b2a76b9719d911017c592ae2b8f3c5a1d2e6f7b8c9d0e1f2a3b4c';

const params = z.object({
  token: z.string().min(1).meta({
    description: 'The secret token of the webhook, from its URL (shown once, by webhooks.create)',
    example: TOKEN_EXAMPLE,
  }),
});

const signature = z
  .string()
  .regex(/^sha256=[0-9a-fA-F]{64}$/)
  .optional();

const headers = z.object({
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

const formFields = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .meta({ description: 'Form fields as string inputs; a repeated field becomes a list of strings' });

export function registerWebhooks(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'post',
    path: '/api/webhooks/{token}',
    operationId: 'callWebhook',
    tags: ['Webhooks'],
    summary: 'Call an inbound webhook',
    description:
      'Starts an execution of the webhook’s workflow (its deployed version) with the body as its ' +
      'inputs; the execution’s trigger is `webhook`. No API key: the token in the URL is the ' +
      'credential, so keep the URL secret. When the webhook has a secret the call must be signed ' +
      '(X-Webhook-Signature, or GitHub’s X-Hub-Signature-256); an unsigned or wrongly signed call is ' +
      'a 401 and runs nothing. An async webhook (the default) answers 202 with a job to poll (GET ' +
      '/api/jobs/{taskId} with a key of the workspace); a sync one waits and answers as a sync execute ' +
      'does. Runs are billed to the workspace and rate limited like API executions.',
    security: [],
    request: {
      params,
      headers,
      body: {
        required: false,
        description: 'A JSON object of inputs (empty body: no inputs), or form fields',
        content: {
          'application/json': {
            schema: webhookInputs,
            examples: {
              inputs: { summary: 'Inputs', value: { name: 'Ada' } },
              event: {
                summary: 'An event as a sender posts it',
                value: { action: 'opened', issue: { number: 42, title: 'Crash on start' } },
              },
            },
          },
          'application/x-www-form-urlencoded': { schema: formFields, example: { name: 'Ada' } },
        },
      },
    },
    responses: {
      200: ok(
        {
          description: 'Sync webhook: the run finished; `success` says whether it completed or failed',
          schema: z.union([syncCompleted, syncFailed]),
          examples: finishedExamples,
        },
        'execute',
      ),
      202: ok(
        {
          description: 'Async webhook: queued (or a sync run that outlived its wait: poll its job)',
          schema: z.union([accepted, stillRunning]),
          examples: queuedOrRunningExamples('webhook'),
        },
        'execute',
      ),
      ...errors(
        {
          400: [
            "Malformed JSON body: Unexpected end of input at line 1, column 14: expected ',' or '}'",
            {
              error: 'The body must be a JSON object of workflow inputs',
              details: [
                { code: 'invalid_type', path: [], message: 'Invalid input: expected record, received array' },
              ],
            },
            {
              error: 'Invalid workflow inputs',
              details: [
                {
                  code: 'invalid_type',
                  path: ['inputs', 'name'],
                  message: 'Expected string, received number',
                },
              ],
            },
            'Workflow is not deployed: deploy it before executing it',
          ],
          401: [
            "Missing signature: send X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body under the webhook's secret>",
            'Invalid signature',
            'Invalid X-Webhook-Timestamp: send the time in Unix seconds',
            "X-Webhook-Timestamp is more than 5 minutes from the server's time",
          ],
          402: 'Usage limit exceeded: $5.001 spent of $5 this billing period (free plan)',
          403: 'The workspace is archived',
          404: 'Webhook not found',
          413: 'Request body over 10485760 bytes',
          415: 'Send the inputs as a JSON object, or as application/x-www-form-urlencoded fields',
          429: 'Rate limit exceeded for async executions: 200 per minute (free plan); retry in 2 s',
        },
        {
          metering: 'execute',
          authenticated: false,
          meanings: {
            401: 'The webhook has a secret, and the signature is missing, wrong or too old',
            404: 'No webhook has this token (never made, deleted, or its token rotated)',
          },
        },
      ),
    },
  });
}
