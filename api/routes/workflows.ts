// POST /api/workflows/{id}/execute: runs the deployed version of a workflow, synchronously (waits
// for the runner's result) or asynchronously (answers 202 with a job to poll). Clients of the
// original API may send `X-Execution-Mode: async`, and the inputs as the body itself or `{input}`.
import { Hono } from 'hono';
import { z } from 'zod';
import { actorOf, authorizeLoadedResource } from '../../db/access.ts';
import { createBatcher } from '../../db/batcher.ts';
import { invalidField, notFound, ServiceError } from '../../db/errors.ts';
import { type DoneNotice, getExecution } from '../../db/executions.ts';
import { billingContext } from '../../db/usage.ts';
import { createVersionCache } from '../../db/version-cache.ts';
import { loadExecutionTargets } from '../../db/workflows.ts';
import { checkInputs } from '../../runner/executor/inputs.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { type Enqueued, executionEnqueuer } from '../execution-enqueuer.ts';
import { rateLimitHeaders } from '../middleware/rate-limit.ts';
import { jsonBody } from '../middleware/validate.ts';
import { jobRecord } from './jobs.ts';

const uuid = z.uuid();
// Fields of the body that steer the call rather than feed the workflow.
const CONTROL_FIELDS = ['inputs', 'input', 'async', 'stream', 'selectedOutputs', 'workflowId'];

const executeBody = z
  .looseObject({
    inputs: z.record(z.string(), z.unknown()).optional(),
    input: z.unknown().optional(),
    async: z.boolean().optional(),
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

export function workflowRoutes({ db, config, queue, waiter, clock }: ApiDeps) {
  const versions = createVersionCache(db);
  const loadTarget = createBatcher((wanted: { workflowId: string; userId: string | null }[]) =>
    loadExecutionTargets(db, wanted),
  );
  const enqueue = executionEnqueuer({ db, config, queue, clock });
  /** The result of a finished execution read from its row; null while it is not finished. */
  const finishedRow = async (id: string): Promise<DoneNotice | null> => {
    const row = await getExecution(db, id);
    if (!row || (row.status !== 'completed' && row.status !== 'failed')) return null;
    return {
      id,
      status: row.status,
      output: row.output,
      error: row.error,
      startedAt: (row.started_at ?? row.created_at).toISOString(),
      endedAt: (row.ended_at ?? row.created_at).toISOString(),
    };
  };

  return new Hono<ApiEnv>().post('/:id/execute', async (c) => {
    const principal = c.get('principal');
    const id = c.req.param('id');
    if (!uuid.safeParse(id).success) throw invalidField('workflowId', 'Must be a UUID', 'invalid_format');
    const body = await jsonBody(c, executeBody);
    const target = await loadTarget({
      workflowId: id,
      userId: principal.type === 'personal' ? principal.userId : null,
    });
    if (!target) throw notFound('Workflow');
    const access = authorizeLoadedResource(
      principal,
      target.workspace,
      target.permission,
      'write',
      'Workflow',
    );
    const version = target.deployedVersion;
    const deployed = version === null ? null : await versions.get(id, version);
    if (version === null || !deployed)
      throw new ServiceError(400, 'Workflow is not deployed: deploy it before executing it');
    const checked = checkInputs(deployed.definition.inputs, inputsOf(body));
    if (checked.issues.length)
      throw new ServiceError(400, 'Invalid workflow inputs', { details: checked.issues });
    const isAsync = body.async === true || c.req.header('x-execution-mode')?.toLowerCase() === 'async';

    const executionId = crypto.randomUUID();
    const mode = isAsync ? 'async' : 'sync';
    const billedUserId = principal.type === 'personal' ? principal.userId : principal.billedUserId;
    const ctx = billingContext(target.plan, target.overrides, access.workspace.organization_id, billedUserId);
    // Registered before the job exists, so the runner's notice cannot come too early to be heard.
    const wait = isAsync ? null : waiter.wait(executionId, config.SYNC_WAIT_TIMEOUT_MS);
    let enqueued: Enqueued;
    try {
      enqueued = await enqueue({
        ctx,
        actor: actorOf(principal),
        execution: {
          id: executionId,
          organizationId: access.workspace.organization_id,
          workspaceId: access.workspace.id,
          workflowId: id,
          version,
          mode,
          trigger: 'api',
          apiKeyId: principal.keyId,
          billedUserId,
          billingSubject: config.BILLING_ENABLED ? ctx.subject : null,
          inputs: checked.inputs,
        },
      });
    } catch (err) {
      wait?.cancel();
      throw err;
    }
    const { admission, createdAt } = enqueued;
    if (config.BILLING_ENABLED) {
      for (const [k, v] of Object.entries(rateLimitHeaders(admission.bucket))) c.header(k, v);
    }
    if (!admission.admitted) {
      wait?.cancel();
      throw new ServiceError(admission.status, admission.error, {
        ...(admission.status === 429
          ? { headers: { 'Retry-After': String(Math.max(1, admission.bucket.retryAfterSeconds)) } }
          : {}),
      });
    }
    const limits = admission.limits;
    if (!wait) {
      return c.json(
        {
          success: true,
          taskId: executionId,
          status: 'queued',
          createdAt: (createdAt as Date).toISOString(),
          links: { status: `/api/jobs/${executionId}` },
          limits,
        },
        202,
      );
    }
    const notice = await wait.done;
    // The notice carries the result unless it was too large for one; then the row has it.
    const result =
      notice && (notice.status === 'failed' || 'output' in notice) ? notice : await finishedRow(executionId);
    if (!result) {
      // Still running: hand the caller the job to poll rather than hold the connection forever.
      const row = await getExecution(db, executionId);
      return c.json(
        {
          success: false,
          error: 'The execution is still running: poll its job',
          ...jobRecord(row, executionId),
          limits,
        },
        202,
      );
    }
    const metadata = {
      duration: Date.parse(result.endedAt) - Date.parse(result.startedAt),
      startTime: result.startedAt,
      endTime: result.endedAt,
    };
    return result.status === 'completed'
      ? c.json({ success: true, executionId, output: result.output, limits, metadata })
      : c.json({ success: false, executionId, error: result.error, limits, metadata });
  });
}
