// Per-workflow concurrency limits (definition field `concurrency`): at most `limit` executions of a
// group (workflow, resolved key) are processing at once, across every runner on the database. Only
// executions enqueued with a group come here; the others keep the plain claim (db/executions.ts).
//
// Exact across processes: every claim and every end of a limited execution first takes the
// group's transaction-scoped advisory lock, then counts. A claim that finds the group full (or
// older executions of the group still queued: FIFO) marks the execution `concurrency_waiting` and
// its job is completed in the same transaction. Every end of an execution of the group (recorded
// result, abandoned job) sends, in the transaction that records it, a new job to the waiting ones
// that the freed slots now let in. The count is of rows `processing`: a runner that dies holding one
// keeps its slot only until pg-boss retries the job (the new attempt holds the same slot) or gives
// up on it (the abandon ends it and lets the next one in). A parked execution (resume_at set) holds
// no slot: its park releases it like an end; when due it is queued again and claims one as above.
import type { Queryable } from './client.ts';
import type { Claim } from './executions.ts';

/** The highest limit a workflow may declare (also checked by the migration). */
export const MAX_CONCURRENCY_LIMIT = 1000;

/**
 * Takes the advisory locks of these executions' groups, in one order for every caller (two
 * transactions that lock two groups never wait on each other crosswise). Executions without a group
 * lock nothing. Answers whether any of them has a group, so a caller can skip the hand-over of slots
 * that none of them holds.
 */
export async function lockGroups(tx: Queryable, ids: string[]): Promise<boolean> {
  const locked = await tx.query(
    `select pg_advisory_xact_lock(k) from (
       select distinct hashtextextended(workflow_id::text || '/' || concurrency_group, 0) as k
         from executions where id = any($1::uuid[]) and concurrency_group is not null
        order by k) g`,
    [ids],
  );
  return locked.length > 0;
}

/** A claim of a limited execution: what claimExecutions answers, or that it must wait its turn. */
export type LimitedClaim = { claim: Claim } | { waiting: true } | null;

/**
 * Claims one limited execution under its group's lock (the caller's transaction must hold it,
 * lockGroups): it runs when it is processing already (a retried job keeps its slot) or when the
 * processing executions of its group and those queued before it are fewer than its limit; else it
 * is marked waiting. Null: it finished already.
 */
export async function claimLimitedExecution(tx: Queryable, id: string): Promise<LimitedClaim> {
  const [me] = await tx.query<{ status: string; limit: number; ahead: number }>(
    `select me.status, me.concurrency_limit as limit,
            (select count(*)::int from executions e
              where e.workflow_id = me.workflow_id and e.concurrency_group = me.concurrency_group and e.id <> me.id
                and ((e.status = 'processing' and e.resume_at is null)
                     or (e.status = 'queued' and (e.created_at, e.id) < (me.created_at, me.id)))) as ahead
       from executions me where me.id = $1 and me.status in ('queued', 'processing') and me.resume_at is null`,
    [id],
  );
  if (!me) return null;
  if (me.status !== 'processing' && me.ahead >= me.limit) {
    await tx.query('update executions set concurrency_waiting = true where id = $1', [id]);
    return { waiting: true };
  }
  // clock_timestamp, not now(): the transaction began before its wait for the lock, and the start
  // recorded must follow the end of the execution whose slot it took.
  const [claim] = await tx.query<Claim>(
    `update executions set status = 'processing', attempt = attempt + 1, concurrency_waiting = false,
            started_at = coalesce(started_at, clock_timestamp())
      where id = $1
      returning attempt, workspace_id, workflow_id, version, inputs, depth, started_at,
        callback_url is not null as has_callback, stream_outputs`,
    [id],
  );
  return claim ? { claim } : null;
}

/**
 * After executions of these groups ended (in this transaction, under their groups' locks): the
 * waiting executions that the free slots now let in, in FIFO order, no longer marked waiting. The
 * caller sends each a job in the same transaction.
 */
export async function releaseWaiting(tx: Queryable, endedIds: string[]): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    `with g as (
       select distinct workflow_id, concurrency_group from executions
        where id = any($1::uuid[]) and concurrency_group is not null),
     next as (
       select q.id, q.concurrency_waiting, q.concurrency_limit,
              p.n + row_number() over (partition by g.workflow_id, g.concurrency_group order by q.created_at, q.id) - 1
                as ahead
         from g
         cross join lateral (
           select count(*)::int as n from executions e
            where e.workflow_id = g.workflow_id and e.concurrency_group = g.concurrency_group
              and e.status = 'processing' and e.resume_at is null) p
         cross join lateral (
           select e.id, e.concurrency_waiting, e.concurrency_limit, e.created_at from executions e
            where e.workflow_id = g.workflow_id and e.concurrency_group = g.concurrency_group
              and e.status = 'queued'
            order by e.created_at, e.id limit ${MAX_CONCURRENCY_LIMIT}) q)
     update executions x set concurrency_waiting = false
       from next where x.id = next.id and next.concurrency_waiting and next.ahead < next.concurrency_limit
     returning x.id`,
    [endedIds],
  );
  return rows.map((r) => r.id);
}
