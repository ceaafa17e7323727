// Starts executions of a workflow's deployed version, whatever asked for them: an API caller
// (execute, MCP), a webhook, a schedule's firing or an operator. One path for all: the deployed
// version is looked up, the inputs are checked against it, the run is billed to the caller or, for
// triggers that act for the workspace, to the workspace's billed account, and it is admitted,
// audited and enqueued in one transaction. Callers authorise and shape the answer.
import { actorOf, authorizeLoadedResource } from '../db/access.ts';
import type { Principal } from '../db/api-keys.ts';
import type { Actor } from '../db/audit-logs.ts';
import { createBatcher } from '../db/batcher.ts';
import { loadExecutionTargets } from '../db/execution-targets.ts';
import type { Admission } from '../db/usage.ts';
import { billingContext } from '../db/usage.ts';
import { createVersionCache } from '../db/version-cache.ts';
import { forbidden, notFound, ServiceError } from '../errors.ts';
import { concurrencyGroup } from '../runner/executor/concurrency.ts';
import { checkInputs } from '../runner/executor/inputs.ts';
import { type EnqueuerDeps, executionEnqueuer } from './enqueue-executions.ts';

export type StartedBy =
  /** An API key: it must hold write permission in the workflow's workspace, and is billed. */
  | { principal: Principal }
  /**
   * A trigger acting for the workspace (webhook, schedule, operator): whoever set it up was
   * authorised then; the workspace's billed account pays. `workspaceId`, when given, must be the
   * workflow's (a trigger never runs another workspace's workflow).
   */
  | { actor: Actor; workspaceId?: string };

export interface StartRequest {
  workflowId: string;
  by: StartedBy;
  /**
   * The inputs given, read only once the workflow is known to be deployed, so that a request for
   * a missing workflow is a 404 whatever its body holds.
   */
  inputs: () => Record<string, unknown>;
  mode: 'sync' | 'async';
  /** What started it (api, mcp, webhook, schedule, manual): the logs API filters on it. */
  trigger: string;
  /** False: no rate-limit token and no spend-limit refusal (operators' manual runs). */
  metered?: boolean;
  /** The id to give the execution, when the caller must know it first (to wait for its result). */
  executionId?: string;
  /** Where to POST the Job record when it ends (async API executions; checked by the caller). */
  callbackUrl?: string;
  /** Stream its events (db/execution-events.ts): the selected outputs, [] for all. */
  streamOutputs?: string[];
  /**
   * The version to run instead of the deployed one (a rerun of an earlier execution). The workflow
   * must still be deployed: undeploying stops every execution through the API, reruns included.
   */
  version?: number;
}

export interface Started {
  executionId: string;
  /** Admitted or refused (402/429), with the figures for the limits object and rate-limit headers. */
  admission: Admission;
  /** When it was queued; null when refused. */
  createdAt: Date | null;
}

export function executionStarter(deps: EnqueuerDeps) {
  const { config } = deps;
  const versions = createVersionCache(deps.db);
  const loadTarget = createBatcher((wanted: { workflowId: string; userId: string | null }[]) =>
    loadExecutionTargets(deps.db, wanted),
  );
  const enqueue = executionEnqueuer(deps);

  /** Checks the workflow and inputs, then admits and enqueues; throws a ServiceError (4xx) when refused before admission. */
  return async function start(request: StartRequest): Promise<Started> {
    const { workflowId, by } = request;
    const principal = 'principal' in by ? by.principal : null;
    const target = await loadTarget({
      workflowId,
      userId: principal?.type === 'personal' ? principal.userId : null,
    });
    if (!target) throw notFound('Workflow');
    let workspace = target.workspace;
    if (principal) {
      workspace = authorizeLoadedResource(
        principal,
        workspace,
        target.permission,
        'write',
        'Workflow',
      ).workspace;
    } else if ('workspaceId' in by && by.workspaceId !== undefined && by.workspaceId !== workspace.id) {
      throw notFound('Workflow');
    } else if (workspace.archived_at) {
      // What a key's write permission checks above, a trigger's owner cannot bypass.
      throw forbidden('The workspace is archived');
    }
    if (target.deployedVersion === null)
      throw new ServiceError(400, 'Workflow is not deployed: deploy it before executing it');
    const version = request.version ?? target.deployedVersion;
    const deployed = await versions.get(workflowId, version);
    if (!deployed) {
      throw request.version === undefined
        ? new ServiceError(400, 'Workflow is not deployed: deploy it before executing it')
        : new ServiceError(409, `Version ${version} of the workflow no longer exists`);
    }
    const checked = checkInputs(deployed.definition.inputs, request.inputs());
    if (checked.issues.length)
      throw new ServiceError(400, 'Invalid workflow inputs', { details: checked.issues });

    const executionId = request.executionId ?? crypto.randomUUID();
    const organizationId = workspace.organization_id;
    const billedUserId = !principal
      ? workspace.billed_account_user_id
      : principal.type === 'personal'
        ? principal.userId
        : principal.billedUserId;
    const ctx = billingContext(target.plan, target.overrides, organizationId, billedUserId);
    const { admission, createdAt } = await enqueue({
      ctx,
      actor: principal ? actorOf(principal) : (by as { actor: Actor }).actor,
      metered: request.metered ?? true,
      execution: {
        id: executionId,
        organizationId,
        workspaceId: workspace.id,
        workflowId,
        version,
        mode: request.mode,
        trigger: request.trigger,
        apiKeyId: principal?.keyId ?? null,
        billedUserId,
        billingSubject: config.BILLING_ENABLED ? ctx.subject : null,
        inputs: checked.inputs,
        callbackUrl: request.callbackUrl ?? null,
        streamOutputs: request.streamOutputs ?? null,
        concurrency: concurrencyGroup(deployed.definition.concurrency, checked.inputs),
      },
    });
    return { executionId, admission, createdAt };
  };
}
