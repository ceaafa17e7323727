// Admin: schedules, a deployed workflow run on a cron expression. Each change is written to our
// table first (with its audit entry), then mirrored into pg-boss's scheduler, which fires it
// (jobs/schedules.ts). Listings add when each schedule fires next.
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  type Schedule,
  setSchedulePaused,
} from '../../db/schedules.ts';
import { checkRecurrence, nextFiring, syncSchedule } from '../../jobs/schedules.ts';
import { checkInputs } from '../../runner/executor/inputs.ts';
import { triggerFilter, triggerTarget } from '../trigger-target.ts';
import { procedure, router } from '../trpc.ts';

const byId = z.object({ id: z.uuid() });

const withNext = (boss: PgBoss, s: Schedule) => ({ ...s, nextRunAt: nextFiring(boss, s) });

export const schedulesRouter = router({
  create: procedure
    .meta({ description: 'Run a deployed workflow on a cron expression, in a time zone, with fixed inputs' })
    .input(
      triggerTarget.extend({
        cron: z.string().trim().min(1).max(200),
        timezone: z.string().trim().min(1).max(100).default('UTC'),
        inputs: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const recurrence = checkRecurrence(ctx.queue, input.cron, input.timezone);
      const schedule = await createSchedule(ctx.db, ADMIN_ACTOR, { ...input, ...recurrence }, checkInputs);
      try {
        await syncSchedule(ctx.db, ctx.queue, schedule.id);
      } catch (err) {
        // A schedule that cannot fire must not be listed as if it would.
        await deleteSchedule(ctx.db, ADMIN_ACTOR, schedule.id).catch(() => {});
        throw err;
      }
      return withNext(ctx.queue, schedule);
    }),
  list: procedure
    .meta({ description: "List a workspace's or a workflow's schedules, with when each fires next" })
    .input(triggerFilter)
    .query(async ({ ctx, input }) => (await listSchedules(ctx.db, input)).map((s) => withNext(ctx.queue, s))),
  pause: procedure
    .meta({ description: 'Pause a schedule: it stops firing and stays listed' })
    .input(byId)
    .mutation(async ({ ctx, input }) => {
      const schedule = await setSchedulePaused(ctx.db, ADMIN_ACTOR, input.id, true);
      await syncSchedule(ctx.db, ctx.queue, input.id);
      return withNext(ctx.queue, schedule);
    }),
  resume: procedure
    .meta({ description: 'Resume a paused schedule' })
    .input(byId)
    .mutation(async ({ ctx, input }) => {
      const schedule = await setSchedulePaused(ctx.db, ADMIN_ACTOR, input.id, false);
      await syncSchedule(ctx.db, ctx.queue, input.id);
      return withNext(ctx.queue, schedule);
    }),
  delete: procedure
    .meta({ description: 'Delete a schedule' })
    .input(byId)
    .mutation(async ({ ctx, input }) => {
      const deleted = await deleteSchedule(ctx.db, ADMIN_ACTOR, input.id);
      await syncSchedule(ctx.db, ctx.queue, input.id);
      return deleted;
    }),
});
