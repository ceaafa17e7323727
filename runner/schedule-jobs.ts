// A schedule's firing (queue `workflow-schedule`, one job per occurrence from pg-boss's cron pass,
// whose copies of our schedules jobs/schedules.ts keeps in step): start the execution (trigger
// `schedule`, billed and limited like any other) and record what happened on the schedule.
import type { Job, PgBoss } from 'pg-boss';
import type { Db } from '../db/client.ts';
import { getExecution } from '../db/executions.ts';
import { type FiringStatus, getScheduleToFire, recordFiring, type Schedule } from '../db/schedules.ts';
import { ServiceError } from '../errors.ts';
import type { WorkflowSchedulePayload } from '../jobs/queues.ts';
import { syncSchedule } from '../jobs/schedules.ts';
import type { executionStarter } from '../jobs/start-execution.ts';
import type { Logger } from '../logger.ts';

type Outcome = { status: FiringStatus; error: string | null };

export interface ScheduleJobDeps {
  db: Db;
  boss: PgBoss;
  log: Logger;
  start: ReturnType<typeof executionStarter>;
}

/**
 * The runner's work on queue `workflow-schedule`: one job per firing. The execution takes the job's
 * id, so a firing delivered again (its runner died after starting it) starts nothing twice. A firing
 * refused by the spend or rate limit (402/429), or refused before admission (the workflow was
 * undeployed, its inputs no longer fit, the workspace is archived), is recorded on the schedule and
 * not retried: the next occurrence tries again. Only unexpected errors (the database) are retried.
 */
export function scheduleJobHandler(deps: ScheduleJobDeps) {
  const { db, boss, log } = deps;

  /** Starts the schedule's execution: billed to its workspace, metered, audited, enqueued. */
  async function fire(schedule: Schedule, executionId: string): Promise<Outcome> {
    try {
      const started = await deps.start({
        workflowId: schedule.workflowId,
        by: { actor: { userId: null, name: `schedule ${schedule.id}` }, workspaceId: schedule.workspaceId },
        inputs: () => schedule.inputs,
        mode: 'async',
        trigger: 'schedule',
        executionId,
      });
      const { admission } = started;
      return admission.admitted
        ? { status: 'started', error: null }
        : { status: 'refused', error: `${admission.status}: ${admission.error}` };
    } catch (err) {
      // Refused before admission: not deployed, inputs that no longer fit the deployed version.
      if (!(err instanceof ServiceError)) throw err;
      const details = err.details?.map((d) => `${d.path.join('.')}: ${d.message}`).join('; ');
      return { status: 'failed', error: `${err.status}: ${err.message}${details ? ` (${details})` : ''}` };
    }
  }

  return async (job: Job<WorkflowSchedulePayload>) => {
    const scheduleId = String(job.data?.scheduleId ?? '');
    const schedule = await getScheduleToFire(db, scheduleId);
    if (!schedule || schedule.paused) {
      // A copy outlived its row (deleted with its workflow or workspace) or its pause.
      log.info('schedule firing dropped', { scheduleId, reason: schedule ? 'paused' : 'no such schedule' });
      await syncSchedule(db, boss, scheduleId);
      return;
    }
    const executionId = job.id;
    // A delivery whose execution exists already: its runner died after starting it.
    const outcome: Outcome = (await getExecution(db, executionId))
      ? { status: 'started', error: null }
      : schedule.workspaceArchived
        ? { status: 'failed', error: '403: The workspace is archived' }
        : await fire(schedule, executionId);
    if (outcome.status !== 'started')
      log.warn('schedule firing started no execution', { scheduleId, ...outcome });
    await recordFiring(db, scheduleId, {
      ...outcome,
      executionId: outcome.status === 'started' ? executionId : null,
    });
  };
}
