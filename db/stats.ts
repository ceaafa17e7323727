// The admin console's overview: executions that ended in each minute of the last hour (by final
// status, with p50/p95 duration), executions in flight, the queues' backlog and the knowledge
// ingestion backlog, optionally narrowed to one organization or workspace. The executions and
// documents figures come from one statement; the queues' from queueBacklog (pg-boss's table knows
// no tenant, so they are always service-wide); the caller names the queues (jobs/queues.ts), so an
// idle one still shows, as zeros.
import { invalidField, notFound } from '../errors.ts';
import { queueBacklog } from './backlog.ts';
import type { Queryable } from './client.ts';

/** The window the overview covers: this many one-minute buckets, the current (partial) one last. */
export const OVERVIEW_MINUTES = 60;

export interface MinuteStats {
  /** The start of the minute, ISO 8601. */
  minute: string;
  completed: number;
  failed: number;
  /** Median duration (ended − started) of the executions that ended in this minute; null: none did. */
  p50Ms: number | null;
  p95Ms: number | null;
}

export interface QueueStats {
  queue: string;
  /** Jobs waiting for a runner: new ones and ones waiting for another attempt. */
  waiting: number;
  /** Jobs a runner holds now. */
  active: number;
  /** Age of the oldest waiting job, in seconds; 0 when none waits. */
  oldestWaitingSeconds: number;
}

export interface Overview {
  minutes: MinuteStats[];
  executions: { queued: number; processing: number };
  queues: QueueStats[];
  ingestion: { pending: number; processing: number; failed: number };
  generatedAt: string;
}

export interface OverviewScope {
  organizationId?: string | undefined;
  workspaceId?: string | undefined;
}

// One statement, one instant (now() is fixed for it). Executions that ended in the window are read
// through executions_ended_idx (the range on ended_at implies its `ended_at is not null`); in-flight
// ones through executions_status_idx. Durations are in milliseconds, as float8 so nothing rounds.
// The scope columns say whether the organization and workspace asked for exist (checked after).
export const OVERVIEW_SQL = `
with bounds as (
  select now() as at, date_trunc('minute', now()) - make_interval(mins => $3::int - 1) as since
), ended as (
  select date_trunc('minute', e.ended_at) as minute, e.status,
         (extract(epoch from e.ended_at - e.started_at) * 1000)::float8 as ms
    from executions e
   where e.ended_at >= date_trunc('minute', now()) - make_interval(mins => $3::int - 1)
     and e.ended_at < date_trunc('minute', now()) + interval '1 minute'
     and e.status in ('completed', 'failed')
     and ($1::uuid is null or e.organization_id = $1::uuid)
     and ($2::uuid is null or e.workspace_id = $2::uuid)
), per_minute as (
  select minute, count(*) filter (where status = 'completed')::int as completed,
         count(*) filter (where status = 'failed')::int as failed,
         percentile_cont(0.5) within group (order by ms) as p50,
         percentile_cont(0.95) within group (order by ms) as p95
    from ended group by minute
)
select b.at, b.since,
  (select coalesce(json_agg(json_build_object(
            'at', extract(epoch from minute)::float8 * 1000, 'completed', completed, 'failed', failed,
            'p50', p50, 'p95', p95)), '[]'::json)
     from per_minute) as minutes,
  (select json_build_object(
            'queued', count(*) filter (where status = 'queued'),
            'processing', count(*) filter (where status = 'processing'))
     from executions e
    where status in ('queued', 'processing')
      and ($1::uuid is null or e.organization_id = $1::uuid)
      and ($2::uuid is null or e.workspace_id = $2::uuid)) as in_flight,
  (select json_build_object(
            'pending', count(*) filter (where processing_status = 'pending'),
            'processing', count(*) filter (where processing_status = 'processing'),
            'failed', count(*) filter (where processing_status = 'failed'))
     from knowledge_documents d
    where processing_status in ('pending', 'processing', 'failed')
      and ($2::uuid is null or d.workspace_id = $2::uuid)
      and ($1::uuid is null or d.workspace_id in (select id from workspaces where organization_id = $1::uuid))
  ) as ingestion,
  ($1::uuid is null or exists (select 1 from organizations where id = $1::uuid)) as organization_found,
  (select organization_id from workspaces where id = $2::uuid) as workspace_organization_id
from bounds b`;

type OverviewRow = {
  at: Date;
  since: Date;
  minutes: { at: number; completed: number; failed: number; p50: number | null; p95: number | null }[];
  in_flight: { queued: number; processing: number };
  ingestion: { pending: number; processing: number; failed: number };
  organization_found: boolean;
  workspace_organization_id: string | null;
};

/** The overview, for the whole service or one organization or workspace (404 when it does not exist). */
export async function overviewStats(
  db: Queryable,
  queueNames: readonly string[],
  scope: OverviewScope = {},
): Promise<Overview> {
  const [[row], backlog] = await Promise.all([
    db.query<OverviewRow>(OVERVIEW_SQL, [
      scope.organizationId ?? null,
      scope.workspaceId ?? null,
      OVERVIEW_MINUTES,
    ]),
    queueBacklog(db),
  ]);
  if (!row) throw new Error('the overview statement answered no row');
  if (!row.organization_found) throw notFound('Organization');
  if (scope.workspaceId) {
    if (!row.workspace_organization_id) throw notFound('Workspace');
    if (scope.organizationId && row.workspace_organization_id !== scope.organizationId)
      throw invalidField('workspaceId', 'Not a workspace of that organization');
  }

  // Zero-filled: every minute of the window appears, oldest first.
  const byMinute = new Map(row.minutes.map((m) => [Math.round(m.at), m]));
  const since = new Date(row.since).getTime();
  const minutes = Array.from({ length: OVERVIEW_MINUTES }, (_, i): MinuteStats => {
    const at = since + i * 60_000;
    const m = byMinute.get(at);
    return {
      minute: new Date(at).toISOString(),
      completed: m?.completed ?? 0,
      failed: m?.failed ?? 0,
      p50Ms: m?.p50 ?? null,
      p95Ms: m?.p95 ?? null,
    };
  });

  return {
    minutes,
    executions: { queued: Number(row.in_flight.queued), processing: Number(row.in_flight.processing) },
    queues: queueStats(queueNames, backlog),
    ingestion: {
      pending: Number(row.ingestion.pending),
      processing: Number(row.ingestion.processing),
      failed: Number(row.ingestion.failed),
    },
    generatedAt: new Date(row.at).toISOString(),
  };
}

/** Per queue, waiting (created or retry) and active jobs: every queue of ours, idle ones as zeros. */
function queueStats(
  queueNames: readonly string[],
  backlog: Awaited<ReturnType<typeof queueBacklog>>,
): QueueStats[] {
  const byQueue = new Map<string, QueueStats>(
    queueNames.map((queue) => [queue, { queue, waiting: 0, active: 0, oldestWaitingSeconds: 0 }]),
  );
  for (const b of backlog) {
    let q = byQueue.get(b.queue);
    if (!q) {
      q = { queue: b.queue, waiting: 0, active: 0, oldestWaitingSeconds: 0 };
      byQueue.set(b.queue, q);
    }
    if (b.state === 'active') q.active += b.jobs;
    else {
      q.waiting += b.jobs;
      q.oldestWaitingSeconds = Math.max(q.oldestWaitingSeconds, b.oldestSeconds);
    }
  }
  return [...byQueue.values()].sort((a, b) => a.queue.localeCompare(b.queue));
}
