-- Rate limits, spend per billing period, and the execution log.

-- Token buckets, one per (billed subject, kind): key '<subject>:<kind>', for example
-- 'user:<uuid>:sync' or 'org:<uuid>:api'. A bucket stores what it held when last touched; what it
-- holds now is computed from the time since, so nothing has to refill it in the background.
create table rate_limit_buckets (
  key text primary key,
  tokens double precision not null,
  updated_at timestamptz not null
);

-- Spend per billed subject ('user:<uuid>' on free and pro, 'org:<uuid>' on team and enterprise) per
-- billing period (a calendar month, UTC). Runners add each finished execution's cost here in the
-- statement that records the execution.
create table usage_periods (
  subject text not null,
  period_start date not null,
  cost numeric(20, 9) not null default 0,
  executions bigint not null default 0,
  updated_at timestamptz not null default now(),
  primary key (subject, period_start)
);

-- Takes tokens from buckets, atomically per bucket: p_wanted[i] tokens from bucket p_keys[i],
-- which holds at most p_capacity[i] and refills at p_per_ms[i] tokens per millisecond. Grants as
-- many as it holds (never more), so of a burst of concurrent requests exactly as many pass as there
-- were tokens. p_wanted 0 only reads a bucket. p_now is the caller's clock, so tests can move time.
-- With p_spend_limits[i] set, it first reads subject p_spend_subjects[i]'s spend in the period
-- starting p_period and grants nothing once that spend has reached the limit: admission of new
-- executions in one statement.
-- The row lock serialises concurrent takers of one bucket; callers pass keys sorted, so two
-- batches never wait on each other in opposite orders.
create function take_rate_tokens(
  p_keys text[], p_capacity double precision[], p_per_ms double precision[], p_wanted integer[],
  p_now timestamptz, p_spend_subjects text[] default null, p_spend_limits numeric[] default null,
  p_period date default null
) returns table (bucket_key text, granted integer, remaining double precision, as_of timestamptz, spent numeric)
language plpgsql as $$
declare
  i integer;
  wanted integer;
  held double precision;
  held_at timestamptz;
  refilled double precision;
  taken integer;
begin
  for i in 1 .. coalesce(array_length(p_keys, 1), 0) loop
    wanted := p_wanted[i];
    spent := null;
    if p_spend_limits[i] is not null then
      select u.cost into spent from usage_periods u
        where u.subject = p_spend_subjects[i] and u.period_start = p_period;
      spent := coalesce(spent, 0);
      if spent >= p_spend_limits[i] then
        wanted := 0;
      end if;
    end if;
    if wanted > 0 then
      insert into rate_limit_buckets as b (key, tokens, updated_at)
        values (p_keys[i], p_capacity[i], p_now) on conflict (key) do nothing;
      select b.tokens, b.updated_at into held, held_at from rate_limit_buckets b
        where b.key = p_keys[i] for update;
    else
      select b.tokens, b.updated_at into held, held_at from rate_limit_buckets b where b.key = p_keys[i];
      if not found then
        held := p_capacity[i];
        held_at := p_now;
      end if;
    end if;
    -- Another process's clock may run a little behind: time never flows backwards for a bucket.
    refilled := least(p_capacity[i],
      held + greatest(0, extract(epoch from (p_now - held_at)) * 1000) * p_per_ms[i]);
    taken := least(wanted, floor(refilled)::integer);
    if wanted > 0 then
      update rate_limit_buckets b set tokens = refilled - taken, updated_at = greatest(held_at, p_now)
        where b.key = p_keys[i];
    end if;
    bucket_key := p_keys[i];
    granted := taken;
    remaining := refilled - taken;
    as_of := greatest(held_at, p_now);
    return next;
  end loop;
end
$$;

-- The execution log is the executions table: a finished execution is its log entry. `log_id` is
-- the entry's own id; `billing_subject` is whom the run is billed to (null: not billed);
-- `duration_ms` is kept for the duration filters.
alter table executions add column log_id uuid not null default gen_random_uuid();
alter table executions add column billing_subject text;
alter table executions add column duration_ms integer
  generated always as ((extract(epoch from (ended_at - started_at)) * 1000)::integer) stored;
create unique index executions_log_id_key on executions (log_id);
-- Log pages: newest first within a workspace, finished executions only.
create index executions_log_page_idx on executions (workspace_id, created_at desc, id desc)
  where ended_at is not null;
