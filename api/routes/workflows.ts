// POST /api/workflows/{id}/execute: runs the deployed version of a workflow, synchronously (waits
// for the runner's result) or asynchronously (answers 202 with a job to poll). Clients of the
// original API may send `X-Execution-Mode: async`, and the inputs as the body itself or `{input}`.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeResource } from '../../db/access.ts';
import { invalidField, ServiceError } from '../../db/errors.ts';
import { getExecution, insertExecution } from '../../db/executions.ts';
import { executionLimits } from '../../db/usage.ts';
import { loadDeployed } from '../../db/workflows.ts';
import { sendInTransaction } from '../../runner/boss.ts';
import { checkInputs } from '../../runner/executor/inputs.ts';
import { QUEUES } from '../../runner/queues.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
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

export function workflowRoutes({ db, config, queue, waiter }: ApiDeps) {
  return new Hono<ApiEnv>().post('/:id/execute', async (c) => {
    const principal = c.get('principal');
    const id = c.req.param('id');
    if (!uuid.safeParse(id).success) throw invalidField('workflowId', 'Must be a UUID', 'invalid_format');
    const body = await jsonBody(c, executeBody);
    const deployed = await loadDeployedOrNotFound(id);
    const access = await authorizeResource(db, principal, deployed.workspaceId, 'write', 'Workflow');
    if (deployed.version === null)
      throw new ServiceError(400, 'Workflow is not deployed: deploy it before executing it');
    const checked = checkInputs(deployed.definition.inputs, inputsOf(body));
    if (checked.issues.length)
      throw new ServiceError(400, 'Invalid workflow inputs', { details: checked.issues });
    const isAsync = body.async === true || c.req.header('x-execution-mode')?.toLowerCase() === 'async';

    const executionId = crypto.randomUUID();
    // Registered before the job exists, so the runner's notice cannot come too early to be heard.
    const wait = isAsync ? null : waiter.wait(executionId, config.SYNC_WAIT_TIMEOUT_MS);
    let createdAt: Date;
    try {
      ({ createdAt } = await db.transaction(async (tx) => {
        const row = await insertExecution(tx, {
          id: executionId,
          organizationId: access.workspace.organization_id,
          workspaceId: access.workspace.id,
          workflowId: id,
          version: deployed.version as number,
          mode: isAsync ? 'async' : 'sync',
          trigger: 'api',
          apiKeyId: principal.keyId,
          billedUserId: principal.type === 'personal' ? principal.userId : principal.billedUserId,
          inputs: checked.inputs,
        });
        await sendInTransaction(queue, tx, QUEUES.workflowExecute, {
          id: executionId,
          data: { executionId },
          heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
        });
        return row;
      }));
    } catch (err) {
      wait?.cancel();
      throw err;
    }
    const limits = await executionLimits(db, access.workspace.organization_id);
    if (!wait) {
      return c.json(
        {
          success: true,
          taskId: executionId,
          status: 'queued',
          createdAt: createdAt.toISOString(),
          links: { status: `/api/jobs/${executionId}` },
          limits,
        },
        202,
      );
    }
    const finished = await wait.done;
    const row = await getExecution(db, executionId);
    if (!finished || !row || (row.status !== 'completed' && row.status !== 'failed')) {
      // Still running: hand the caller the job to poll rather than hold the connection forever.
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
      duration: (row.ended_at?.getTime() ?? 0) - (row.started_at?.getTime() ?? 0),
      startTime: row.started_at?.toISOString() ?? null,
      endTime: row.ended_at?.toISOString() ?? null,
    };
    return row.status === 'completed'
      ? c.json({ success: true, executionId, output: row.output, limits, metadata })
      : c.json({ success: false, executionId, error: row.error, limits, metadata });

    async function loadDeployedOrNotFound(workflowId: string) {
      const [w] = await db.query<{ workspace_id: string; deployed_version: number | null }>(
        'select workspace_id, deployed_version from workflows where id = $1',
        [workflowId],
      );
      if (!w) throw new ServiceError(404, 'Workflow not found');
      const d = w.deployed_version === null ? null : await loadDeployed(db, workflowId);
      return {
        workspaceId: w.workspace_id,
        version: d?.version ?? null,
        definition: d?.definition ?? { inputs: {} },
      };
    }
  });
}
