// Examples of POST /api/webhooks/{token}: a token, a signature, bodies a sender posts, and the
// errors a call gets.
import type { ErrorCases } from '../../openapi/error-answers.ts';

export const TOKEN_EXAMPLE = 'Zk3v9Qm2Xr7TbLw4Hn8Ps1Dc6Yf0Ue5Ja2Kg9Vo3Ri7';
export const SIGNATURE_EXAMPLE = 'sha256=5d41402abc4b2a76b9719d911017c592ae2b8f3c5a1d2e6f7b8c9d0e1f2a3b4c';

/** Bodies as senders post them. */
export const bodyExamples = {
  inputs: { summary: 'Inputs', value: { name: 'Ada' } },
  event: {
    summary: 'An event as a sender posts it',
    value: { action: 'opened', issue: { number: 42, title: 'Crash on start' } },
  },
};

/** The errors of a call, with the messages the service gives. */
export const webhookErrors = {
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
} satisfies ErrorCases;
