// POST /api/workflows/{id}/execute: runs the deployed version of a workflow, synchronously (waits
// for the runner's result) or asynchronously (answers 202 with a job to poll). Clients of the
// original API may send `X-Execution-Mode: async`, and the inputs as the body itself or `{input}`.
// An async execution may name a `callbackUrl`, POSTed its Job record when it ends (runner/callback-jobs.ts).
import { Hono } from 'hono';
import { z } from 'zod';
import { invalidField } from '../../errors.ts';
import {
  CALLBACK_URL_MAX_LENGTH,
  callbackUrlFormProblem,
  literalAddressRefusal,
} from '../../net/callback-url.ts';
import { parseAllowList } from '../../net/network-guard.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { executionAnswers } from '../execution-answer.ts';
import { jsonBody } from '../middleware/validate.ts';

const uuid = z.uuid();
// Fields of the body that steer the call rather than feed the workflow.
const CONTROL_FIELDS = ['inputs', 'input', 'async', 'stream', 'selectedOutputs', 'workflowId', 'callbackUrl'];

export const executeBody = z
  .looseObject({
    inputs: z.record(z.string(), z.unknown()).optional(),
    input: z.unknown().optional(),
    async: z.boolean().optional(),
    callbackUrl: z
      .string()
      .max(CALLBACK_URL_MAX_LENGTH)
      .superRefine((url, ctx) => {
        const problem = callbackUrlFormProblem(url);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  })
  .describe('Workflow inputs as `inputs`, or (original API) as `input` or the body itself');

function inputsOf(body: z.output<typeof executeBody>): Record<string, unknown> {
  if (body.inputs !== undefined) return body.inputs;
  if (body.input !== undefined) {
    if (body.input === null || typeof body.input !== 'object' || Array.isArray(body.input)) {
      throw invalidField('input', 'Must be an object of workflow inputs', 'invalid_type');
    }
    return body.input as Record<string, unknown>;
  }
  return Object.fromEntries(Object.entries(body).filter(([k]) => !CONTROL_FIELDS.includes(k)));
}

export function workflowRoutes(deps: ApiDeps) {
  const { config } = deps;
  const executions = executionAnswers(deps);
  const allowList = parseAllowList(config.HTTP_ALLOW_LIST);

  return new Hono<ApiEnv>().post('/:id/execute', async (c) => {
    const id = c.req.param('id');
    if (!uuid.safeParse(id).success) throw invalidField('workflowId', 'Must be a UUID', 'invalid_format');
    const body = await jsonBody(c, executeBody);
    const isAsync = body.async === true || c.req.header('x-execution-mode')?.toLowerCase() === 'async';
    if (body.callbackUrl !== undefined) {
      if (!isAsync) {
        throw invalidField(
          'callbackUrl',
          'A callback needs an async execution: add "async": true (or the header X-Execution-Mode: async)',
        );
      }
      const refusal = await literalAddressRefusal(new URL(body.callbackUrl), allowList);
      if (refusal) throw invalidField('callbackUrl', refusal);
    }
    const started = await executions.start({
      workflowId: id,
      by: { principal: c.get('principal') },
      inputs: () => inputsOf(body),
      mode: isAsync ? 'async' : 'sync',
      trigger: 'api',
      ...(body.callbackUrl !== undefined ? { callbackUrl: body.callbackUrl } : {}),
    });
    return executions.answer(c, started, isAsync ? 'async' : 'sync');
  });
}
