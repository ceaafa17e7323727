// Quotas: every organization with its plan; for the one picked (the current workspace's by default)
// the limits in force with the overrides marked, and the spend this billing period and the storage
// used, per billed subject, as bars against their limits.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { Meter } from '../components/Meter.tsx';
import { bytes, dateTime, usd } from '../format.ts';
import { trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

interface Rate {
  requestsPerMinute: number;
  maxBurst: number;
}

const LIMIT_LABELS: Record<string, [string, (v: unknown) => string]> = {
  sync: ['Sync executions', (v) => rate(v as Rate)],
  async: ['Async executions', (v) => rate(v as Rate)],
  api: ['Other /api/v1 calls', (v) => rate(v as Rate)],
  usageLimit: ['Spend per period', (v) => usd(v as number)],
  storageLimitBytes: ['Storage', (v) => bytes(v as number)],
  maxRowsPerTable: ['Rows per table', (v) => (v as number).toLocaleString()],
  maxTables: ['Tables per workspace', (v) => String(v)],
};

const rate = (r: Rate) => `${r.requestsPerMinute.toLocaleString()}/min, burst ${r.maxBurst.toLocaleString()}`;

export function Quotas() {
  const { organization, organizations, workspaces } = useWorkspace();
  const [picked, setPicked] = useState<string | null>(null);
  const orgId = picked ?? organization?.id ?? organizations[0]?.id ?? null;
  const usage = useQuery({
    queryKey: ['quotas.usage', orgId],
    queryFn: () => trpc.quotas.usage.query({ organizationId: orgId as string }),
    enabled: !!orgId,
    refetchInterval: 15_000,
  });
  const u = usage.data;
  const workspaceNames = new Map(workspaces.map((w) => [w.id, w.name]));

  return (
    <section>
      <div className="page-head">
        <h1>Quotas</h1>
      </div>
      <div className="columns wide-right">
        <div className="card flush">
          <table className="rows">
            <thead>
              <tr>
                <th>Organization</th>
                <th>Plan</th>
              </tr>
            </thead>
            <tbody>
              {organizations.map((o) => (
                <tr
                  key={o.id}
                  className={o.id === orgId ? 'selected' : 'clickable'}
                  onClick={() => setPicked(o.id)}
                  data-org={o.slug}
                >
                  <td>
                    <button type="button" className="link" onClick={() => setPicked(o.id)}>
                      {o.name}
                    </button>
                    <div className="muted small">{o.slug}</div>
                  </td>
                  <td>
                    <span className="badge plan">{o.plan}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div>
          <ErrorNotice error={usage.error} title="Could not load the quotas" />
          {u ? (
            <>
              <div className="card">
                <div className="card-head">
                  <h2>
                    {organizations.find((o) => o.id === u.organizationId)?.name} · plan{' '}
                    <span className="badge plan">{u.plan}</span>
                  </h2>
                  <span className="muted small">
                    period {dateTime(u.period.start)} – {dateTime(u.period.end)}
                    {u.billingEnabled ? '' : ' · billing is off: nothing is refused for spend'}
                  </span>
                </div>
                <Meter label="Spend this period" used={u.spend.used} limit={u.spend.limit} format={usd} />
                <Meter
                  label="Storage"
                  used={u.storage.usedBytes}
                  limit={u.storage.limitBytes}
                  format={bytes}
                />
                <p className="muted small">
                  {u.pooled
                    ? 'Team and enterprise plans pool spend and storage under the organization.'
                    : 'Free and pro plans bill each workspace to its billed user: the bars above are the first owner’s; every billed user is below.'}
                </p>
              </div>
              <div className="card">
                <h2>Limits in force</h2>
                <table>
                  <tbody>
                    {Object.entries(u.limits).map(([key, value]) => {
                      const [label, show] = LIMIT_LABELS[key] ?? [key, (v: unknown) => JSON.stringify(v)];
                      const overridden = key in (u.overrides ?? {});
                      return (
                        <tr key={key} data-limit={key}>
                          <th>{label}</th>
                          <td>{show(value)}</td>
                          <td>
                            {overridden ? (
                              <span className="badge warn">override</span>
                            ) : (
                              <span className="muted">plan</span>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
              {!u.pooled && u.subjects.length ? (
                <div className="card">
                  <h2>Billed users</h2>
                  {u.subjects.map((s) => (
                    <div key={s.subject} className="subject">
                      <h3>
                        {s.user ? `${s.user.name} (${s.user.email})` : 'The organization'}{' '}
                        <span className="muted small">
                          {s.workspaceIds.map((id) => workspaceNames.get(id) ?? id.slice(0, 8)).join(', ') ||
                            'no workspace here'}
                        </span>
                      </h3>
                      <Meter label="Spend" used={s.spend.used} limit={s.spend.limit} format={usd} />
                      <Meter
                        label="Storage"
                        used={s.storage.usedBytes}
                        limit={s.storage.limitBytes}
                        format={bytes}
                      />
                      <p className="muted small">
                        Rate tokens now: sync {s.rateLimit.sync.remaining}/{s.rateLimit.sync.maxBurst}, async{' '}
                        {s.rateLimit.async.remaining}/{s.rateLimit.async.maxBurst}
                      </p>
                    </div>
                  ))}
                </div>
              ) : null}
            </>
          ) : null}
        </div>
      </div>
    </section>
  );
}
