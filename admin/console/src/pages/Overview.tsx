// Overview: the last hour's executions per minute by status with p50/p95 durations (drawn from the
// first minute with runs, at least the last 15), what is queued or running now, each queue's depth
// and the age of its oldest waiting job, and the ingestion backlog. Asks again every 5 seconds.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ActivityChart, shownMinutes, stretchName } from '../components/ActivityChart.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { seconds, time } from '../format.ts';
import { trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

const REFRESH_MS = 5000;

type Scope = 'service' | 'organization' | 'workspace';

export function Overview() {
  const { workspace, organization } = useWorkspace();
  const [scope, setScope] = useState<Scope>('service');
  const input =
    scope === 'workspace' && workspace
      ? { workspaceId: workspace.id }
      : scope === 'organization' && organization
        ? { organizationId: organization.id }
        : {};
  const stats = useQuery({
    queryKey: ['stats.overview', input],
    queryFn: () => trpc.stats.overview.query(input),
    refetchInterval: REFRESH_MS,
  });
  const data = stats.data;
  const totals = data?.minutes.reduce(
    (t, p) => ({ completed: t.completed + p.completed, failed: t.failed + p.failed }),
    { completed: 0, failed: 0 },
  );
  return (
    <section>
      <div className="page-head">
        <h1>Overview</h1>
        <fieldset className="segmented" aria-label="Scope">
          {(
            [
              ['service', 'Whole service'],
              ['organization', organization ? `Organization ${organization.name}` : 'Organization'],
              ['workspace', workspace ? `Workspace ${workspace.name}` : 'Workspace'],
            ] as const
          ).map(([value, label]) => (
            <button
              key={value}
              type="button"
              className={scope === value ? 'on' : ''}
              onClick={() => setScope(value)}
              disabled={value !== 'service' && !workspace}
            >
              {label}
            </button>
          ))}
        </fieldset>
        <span className="muted">
          {data ? `Updated ${time(data.generatedAt)} · refreshes every ${REFRESH_MS / 1000} s` : 'Loading…'}
        </span>
      </div>
      <ErrorNotice error={stats.error} title="Could not load the overview" />
      {data ? (
        <>
          <div className="tiles">
            <Tile label="Queued" value={data.executions.queued} />
            <Tile label="Processing" value={data.executions.processing} />
            <Tile label="Completed (1 h)" value={totals?.completed ?? 0} tone="good" />
            <Tile
              label="Failed (1 h)"
              value={totals?.failed ?? 0}
              tone={totals?.failed ? 'bad' : undefined}
            />
          </div>
          <div className="card">
            <h2>Executions per minute, {stretchName(shownMinutes(data.minutes).length)}</h2>
            <ActivityChart points={data.minutes} />
          </div>
          <div className="columns">
            <div className="card">
              <h2>Queues</h2>
              <p className="muted small">Service-wide: the queues know no tenant.</p>
              <table>
                <thead>
                  <tr>
                    <th>Queue</th>
                    <th className="num">Waiting</th>
                    <th className="num">Active</th>
                    <th className="num">Oldest waiting</th>
                  </tr>
                </thead>
                <tbody>
                  {data.queues.map((q) => (
                    <tr key={q.queue}>
                      <td>
                        <code>{q.queue}</code>
                      </td>
                      <td className="num">{q.waiting}</td>
                      <td className="num">{q.active}</td>
                      <td className="num">{q.waiting ? seconds(q.oldestWaitingSeconds) : '–'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="card">
              <h2>Ingestion backlog</h2>
              <div className="tiles small">
                <Tile label="Pending" value={data.ingestion.pending} />
                <Tile label="Processing" value={data.ingestion.processing} />
                <Tile
                  label="Failed"
                  value={data.ingestion.failed}
                  tone={data.ingestion.failed ? 'bad' : undefined}
                />
              </div>
              <p className="muted">Documents waiting for, or in, parsing, chunking and embedding.</p>
            </div>
          </div>
        </>
      ) : null}
    </section>
  );
}

function Tile(props: { label: string; value: number; tone?: 'good' | 'bad' | undefined }) {
  return (
    <div className={`tile ${props.tone ?? ''}`}>
      <div className="tile-value">{props.value}</div>
      <div className="tile-label">{props.label}</div>
    </div>
  );
}
