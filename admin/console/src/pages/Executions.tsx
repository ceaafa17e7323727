// Executions of the picked workspace, newest first, filtered by workflow, status, trigger and
// creation time (the filters live in the address, so a filtered list can be shared or reloaded),
// paged with the listing's cursor.
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { dateTime, duration, shortId } from '../format.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { type Inputs, trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

const STATUSES = ['queued', 'processing', 'paused', 'completed', 'failed', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];
const TRIGGERS = ['api', 'manual', 'schedule', 'webhook', 'mcp', 'workflow'];
const PAGE = 25;

type ListInput = Inputs['executions']['list'];

/** A datetime-local value (local time, no zone) as an ISO instant; undefined when empty or invalid. */
function instant(local: string | null): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export function Executions() {
  const { workspace } = useWorkspace();
  const { search } = useLocation();
  const params = new URLSearchParams(search);
  const filters = {
    workflowId: params.get('workflow') || undefined,
    status: (STATUSES as readonly string[]).includes(params.get('status') ?? '')
      ? (params.get('status') as Status)
      : undefined,
    trigger: params.get('trigger') || undefined,
    since: params.get('since'),
    until: params.get('until'),
  };
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(name, value);
    else next.delete(name);
    const qs = next.toString();
    navigate(`/executions${qs ? `?${qs}` : ''}`, { replace: true });
  };

  const workflows = useQuery({
    queryKey: ['workflows.list', workspace?.id],
    queryFn: () => trpc.workflows.list.query({ workspaceId: workspace?.id as string }),
    enabled: !!workspace,
  });
  const names = new Map((workflows.data ?? []).map((w) => [w.id, w.name]));

  const input: Omit<ListInput, 'cursor'> = {
    workspaceId: workspace?.id ?? '',
    limit: PAGE,
    ...(filters.workflowId ? { workflowId: filters.workflowId } : {}),
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.trigger ? { trigger: filters.trigger } : {}),
    ...(instant(filters.since) ? { since: instant(filters.since) } : {}),
    ...(instant(filters.until) ? { until: instant(filters.until) } : {}),
  };
  const list = useInfiniteQuery({
    queryKey: ['executions.list', input],
    queryFn: ({ pageParam }) =>
      trpc.executions.list.query({ ...input, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    enabled: !!workspace,
    // Executions still queued or running change state soon: look again.
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.data.some((e) => e.status === 'queued' || e.status === 'processing'))
        ? 2000
        : false,
  });
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <section>
      <div className="page-head">
        <h1>Executions</h1>
        <span className="muted">{workspace ? `in ${workspace.name}` : ''}</span>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <Filter label="Workflow">
          <select
            aria-label="Workflow"
            value={filters.workflowId ?? ''}
            onChange={(e) => setFilter('workflow', e.currentTarget.value)}
          >
            <option value="">any</option>
            {(workflows.data ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </Filter>
        <Filter label="Status">
          <select
            aria-label="Status"
            value={filters.status ?? ''}
            onChange={(e) => setFilter('status', e.currentTarget.value)}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Filter>
        <Filter label="Trigger">
          <select
            aria-label="Trigger"
            value={filters.trigger ?? ''}
            onChange={(e) => setFilter('trigger', e.currentTarget.value)}
          >
            <option value="">any</option>
            {TRIGGERS.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Filter>
        <Filter label="Since">
          <input
            type="datetime-local"
            aria-label="Since"
            value={filters.since ?? ''}
            onChange={(e) => setFilter('since', e.currentTarget.value)}
          />
        </Filter>
        <Filter label="Until">
          <input
            type="datetime-local"
            aria-label="Until"
            value={filters.until ?? ''}
            onChange={(e) => setFilter('until', e.currentTarget.value)}
          />
        </Filter>
        {search ? (
          <button type="button" className="link" onClick={() => navigate('/executions', { replace: true })}>
            Clear filters
          </button>
        ) : null}
      </form>
      <ErrorNotice error={list.error} title="Could not list executions" />
      <div className="card flush">
        <table className="rows">
          <thead>
            <tr>
              <th>Created</th>
              <th>Execution</th>
              <th>Workflow</th>
              <th>Status</th>
              <th>Trigger</th>
              <th className="num">Duration</th>
              <th>Error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr key={e.id} data-execution={e.id}>
                <td className="nowrap">{dateTime(e.createdAt)}</td>
                <td>
                  <Link to={`/executions/${e.id}`}>
                    <code>{shortId(e.id)}</code>
                  </Link>
                </td>
                <td>
                  {names.get(e.workflowId) ?? <code>{shortId(e.workflowId)}</code>}{' '}
                  <span className="muted">v{e.version}</span>
                </td>
                <td>
                  <StatusBadge status={e.status} />
                </td>
                <td>{e.trigger}</td>
                <td className="num nowrap">
                  {e.startedAt && e.endedAt
                    ? duration(new Date(e.endedAt).getTime() - new Date(e.startedAt).getTime())
                    : '–'}
                </td>
                <td className="error-cell" title={e.error ?? undefined}>
                  {e.error ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.isPending && workspace ? <p className="muted pad">Loading…</p> : null}
        {!list.isPending && rows.length === 0 ? (
          <p className="muted pad">No executions {search ? 'match these filters' : 'yet'}.</p>
        ) : null}
      </div>
      {list.hasNextPage ? (
        <button type="button" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}

function Filter(props: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child passed in
    <label className="filter">
      <span>{props.label}</span>
      {props.children}
    </label>
  );
}
