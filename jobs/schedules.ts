// Schedules on pg-boss's own scheduler. Our `schedules` rows are the record; pg-boss keeps a copy of
// each one that is not paused (queue `workflow-schedule`, keyed by our id) and its cron pass, which
// one runner at a time claims, sends one job per occurrence however many runners there are. This
// module checks recurrences the way that pass will read them and keeps pg-boss's copy in step with
// our rows; runner/schedule-jobs.ts handles the firings.
import type { PgBoss } from 'pg-boss';
import type { Db, Queryable } from '../db/client.ts';
import { getSchedule, listActiveSchedules } from '../db/schedules.ts';
import { invalidField } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { QUEUES, type WorkflowSchedulePayload } from './queues.ts';

const SECONDS_FIELD = /^[0-5]?\d$/;

/**
 * Checks a cron expression and time zone, answering the forms to store; throws a 400 naming the
 * field. Five fields (minute hour day-of-month month day-of-week), or six with a leading seconds
 * field that must be one second: pg-boss sends at most one job per schedule per minute, so an
 * expression firing more often would silently fire less often than it says.
 */
export function checkRecurrence(boss: PgBoss, cron: string, timezone: string) {
  let zone: string;
  try {
    zone = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw invalidField('timezone', `Unknown time zone "${timezone}": use an IANA name such as Europe/Paris`);
  }
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw invalidField(
      'cron',
      `Expected 5 fields (minute hour day-of-month month day-of-week) or 6 with a leading seconds field; got ${fields.length}`,
    );
  if (fields.length === 6 && !SECONDS_FIELD.test(fields[0] as string))
    throw invalidField(
      'cron',
      'The seconds field must be a single second (0-59): a schedule fires at most once a minute',
    );
  const normalized = fields.join(' ');
  // pg-boss's own parser, as its cron pass will read the expression.
  try {
    boss.previewSchedule(normalized, { tz: zone, count: 1 });
  } catch (err) {
    throw invalidField('cron', `Invalid cron expression "${normalized}": ${(err as Error).message}`);
  }
  return { cron: normalized, timezone: zone };
}

/** When a schedule fires next (pg-boss's reading of it), for listings; null when paused. */
export function nextFiring(boss: PgBoss, s: { cron: string; timezone: string; paused: boolean }) {
  if (s.paused) return null;
  try {
    return boss.previewSchedule(s.cron, { tz: s.timezone, count: 1 })[0]?.toISOString() ?? null;
  } catch {
    return null;
  }
}

type Wanted = { cron: string; timezone: string } | null;
const same = (a: Wanted, b: Wanted) => a?.cron === b?.cron && a?.timezone === b?.timezone;

async function wanted(db: Queryable, id: string): Promise<Wanted> {
  const s = await getSchedule(db, id);
  return s && !s.paused ? { cron: s.cron, timezone: s.timezone } : null;
}

/**
 * Makes pg-boss's copy of a schedule match our row: scheduled while the row exists unpaused, gone
 * otherwise. pg-boss's table cannot join our transactions (embedded, the one connection is ours
 * while a transaction holds it), so this runs after the row's change commits, and reads the row
 * again after writing: when a concurrent pause or resume changed it meanwhile, it writes again, so
 * the last writer always wrote what the row says. A process that dies in between leaves at worst a
 * copy that fires for a paused or deleted row, which the firing handler drops and unschedules.
 */
export async function syncSchedule(db: Queryable, boss: PgBoss, id: string): Promise<void> {
  let target = await wanted(db, id);
  for (let round = 0; round < 10; round++) {
    if (target) {
      await boss.schedule(
        QUEUES.workflowSchedule,
        target.cron,
        { scheduleId: id } satisfies WorkflowSchedulePayload,
        {
          tz: target.timezone,
          key: id,
        },
      );
    } else {
      await boss.unschedule(QUEUES.workflowSchedule, id);
    }
    const now = await wanted(db, id);
    if (same(now, target)) return;
    target = now;
  }
  throw new Error(`Schedule ${id} kept changing while its pg-boss copy was written`);
}

/**
 * Brings pg-boss's copies in line with our rows at a runner's start: schedules whose copy is
 * missing or stale (a process died between the two writes) are written, and copies of rows that
 * are gone or paused are removed.
 */
export async function reconcileSchedules(db: Db, boss: PgBoss, log: Logger): Promise<void> {
  const [ours, theirs] = await Promise.all([
    listActiveSchedules(db),
    boss.getSchedules(QUEUES.workflowSchedule),
  ]);
  const copies = new Map(theirs.map((s) => [s.key, { cron: s.cron, timezone: s.timezone }]));
  const stale = ours.filter((s) => !same(copies.get(s.id) ?? null, s)).map((s) => s.id);
  const active = new Set(ours.map((s) => s.id));
  const orphans = [...copies.keys()].filter((key) => !active.has(key));
  for (const id of [...stale, ...orphans]) await syncSchedule(db, boss, id);
  if (stale.length || orphans.length)
    log.info('schedules reconciled with pg-boss', { written: stale.length, removed: orphans.length });
}
