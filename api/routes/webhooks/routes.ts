// POST /api/webhooks/{token}: an inbound webhook starts an execution of its workflow with the request
// body as the inputs (trigger `webhook`), billed and rate limited like an API execution of the
// workspace. No API key: the secret token in the URL names the webhook, and when the webhook has a
// secret the body must carry its HMAC-SHA256 signature. Mounted before the API-key check.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { resolveEncryptionKey } from '../../../db/encryption-key.ts';
import { findWebhookByToken, type WebhookTarget, webhookSecret } from '../../../db/webhooks.ts';
import { forbidden, notFound, ServiceError } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { executionAnswers } from '../../execution-answer.ts';
import { jsonBodyLimit } from '../../middleware/body-limit.ts';
import { ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { finishedExamples, queuedOrRunningExamples } from '../workflows/examples.ts';
import {
  accepted,
  stillRunning,
  completed as syncCompleted,
  failed as syncFailed,
} from '../workflows/schemas.ts';
import { inputsOf, verifySignature } from './calls.ts';
import { bodyExamples, webhookErrors } from './examples.ts';
import { formFields, signatureHeaders, webhookInputs, webhookPath } from './schemas.ts';

export const callWebhookRoute = createRoute({
  method: 'post',
  path: '/api/webhooks/{token}',
  operationId: 'callWebhook',
  // No key (the URL's token authenticates)
  scope: null,
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
    params: webhookPath,
    headers: signatureHeaders,
    body: {
      required: false,
      description: 'A JSON object of inputs (empty body: no inputs), or form fields',
      content: {
        'application/json': {
          schema: webhookInputs,
          examples: bodyExamples,
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
    ...errors(webhookErrors, {
      metering: 'execute',
      authenticated: false,
      meanings: {
        401: 'The webhook has a secret, and the signature is missing, wrong or too old',
        404: 'No webhook has this token (never made, deleted, or its token rotated)',
      },
    }),
  },
});

export function webhookRoutes(deps: ApiDeps, guards: Guards) {
  const { db, config, clock } = deps;
  const executions = executionAnswers(deps);
  // Resolved when a signed webhook is first called: the same key the admin plane sealed secrets with.
  let encryptionKey: Buffer | undefined;
  const secretOf = (hook: WebhookTarget) => {
    if (hook.sealedSecret === null) return null;
    encryptionKey ??= resolveEncryptionKey(config);
    return webhookSecret(encryptionKey, hook);
  };

  // Mounted before the API's key check and body limit: the same cap applies here. Plain: the body
  // is JSON or form fields, and its raw bytes are what the signature covers.
  const router = new Router(guards, { rateLimited: false });
  router.app.use('/api/webhooks/*', jsonBodyLimit());
  return router.plain(callWebhookRoute, async (c) => {
    const hook = await findWebhookByToken(db, c.req.param('token'));
    if (!hook) throw notFound('Webhook');
    const contentType = c.req.header('content-type')?.toLowerCase() ?? '';
    if (contentType.startsWith('multipart/form-data'))
      throw new ServiceError(
        415,
        'Send the inputs as a JSON object, or as application/x-www-form-urlencoded fields',
      );
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const secret = secretOf(hook);
    if (secret !== null) verifySignature(c, secret, raw, clock());
    if (hook.workspaceArchived) throw forbidden('The workspace is archived');
    const inputs = inputsOf(contentType, raw);

    const started = await executions.start({
      workflowId: hook.workflowId,
      by: { actor: { userId: null, name: `webhook ${hook.id}` }, workspaceId: hook.workspaceId },
      inputs: () => inputs,
      mode: hook.mode,
      trigger: 'webhook',
    });
    return executions.answer(c, started, hook.mode);
  }).app;
}
