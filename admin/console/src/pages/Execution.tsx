// One execution: its state and timings, the trace spans as a waterfall, and its inputs, output,
// error and cost. Asks again every second while the execution is queued or running, when it also
// offers to cancel it (admin `executions.cancel`); a paused one shows what its approval asks, with
// Approve and Reject (admin `executions.resume`).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import type { Span } from '../../../../runner/executor/trace.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { JsonView } from '../components/JsonView.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { Waterfall } from '../components/Waterfall.tsx';
import { dateTime, duration, usd } from '../format.ts';
import { Link } from '../router.tsx';
import { trpc } from '../trpc.ts';

interface Cost {
  total?: number;
  base?: number;
  tokens?: { prompt: number; completion: number; total: number };
  models?: Record<string, { total: number; tokens: { total: number } }>;
}

export function Execution(props: { id: string }) {
  const execution = useQuery({
    queryKey: ['executions.get', props.id],
    queryFn: () => trpc.executions.get.query({ id: props.id }),
    refetchInterval: (q) => {
      const status = q.state.data?.status;
      return status === 'queued' || status === 'processing' ? 1000 : status === 'paused' ? 5000 : false;
    },
  });
  const e = execution.data;
  const queryClient = useQueryClient();
  const cancel = useMutation({
    mutationFn: () => trpc.executions.cancel.mutate({ id: props.id }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['executions.get', props.id] }),
  });
  const running = e?.status === 'queued' || e?.status === 'processing' || e?.status === 'paused';
  const [answer, setAnswer] = useState('{}');
  const resume = useMutation({
    mutationFn: (approved: boolean) => {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(answer || '{}');
      } catch {
        throw new Error('The data is not JSON');
      }
      return trpc.executions.resume.mutate({ id: props.id, approved, data });
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['executions.get', props.id] }),
  });
  const workflow = useQuery({
    queryKey: ['workflows.get', e?.workflowId],
    queryFn: () => trpc.workflows.get.query({ id: e?.workflowId as string }),
    enabled: !!e,
  });
  const cost = (e?.cost ?? null) as Cost | null;

  return (
    <section>
      <div className="page-head">
        <h1>
          Execution <code>{props.id}</code>
        </h1>
        {e ? <StatusBadge status={e.status} /> : null}
        {running ? (
          <button
            type="button"
            className="danger"
            disabled={cancel.isPending}
            onClick={() => cancel.mutate()}
          >
            {cancel.isPending ? 'Cancelling…' : 'Cancel'}
          </button>
        ) : null}
      </div>
      <ErrorNotice error={cancel.error} title="Could not cancel the execution" />
      <p>
        <Link to="/executions">← All executions</Link>
      </p>
      <ErrorNotice error={execution.error} title="Could not load the execution" />
      {e ? (
        <>
          <div className="card">
            <dl className="facts">
              <Fact label="Workflow">
                <Link to={`/workflows/${e.workflowId}`}>{workflow.data?.name ?? e.workflowId}</Link>{' '}
                <span className="muted">version {e.version}</span>
              </Fact>
              <Fact label="Trigger">
                {e.trigger} · {e.mode}
              </Fact>
              <Fact label="Attempt">{e.attempt}</Fact>
              <Fact label="Created">{dateTime(e.createdAt)}</Fact>
              <Fact label="Started">{dateTime(e.startedAt)}</Fact>
              <Fact label="Ended">{dateTime(e.endedAt)}</Fact>
              {e.cancelledAt ? (
                <Fact label="Cancelled">
                  {dateTime(e.cancelledAt)} <span className="muted">by {e.cancelledBy}</span>
                </Fact>
              ) : null}
              {e.resumeAt ? (
                <Fact label="Parked">
                  until {dateTime(e.resumeAt)} <span className="muted">(no runner held)</span>
                </Fact>
              ) : null}
              <Fact label="Duration">{duration(e.durationMs)}</Fact>
              <Fact label="Cost">{cost?.total !== undefined ? usd(cost.total) : '–'}</Fact>
            </dl>
          </div>
          {e.pause ? (
            <div className="card pause">
              <h2>Waiting for approval</h2>
              <p className="message">{e.pause.message}</p>
              <dl className="facts">
                <Fact label="Block">{e.pause.blockId}</Fact>
                <Fact label="Paused">{dateTime(e.pause.pausedAt)}</Fact>
                <Fact label="Times out">{e.pause.expiresAt ? dateTime(e.pause.expiresAt) : 'never'}</Fact>
              </dl>
              {Object.keys(e.pause.fields).length ? (
                <label>
                  Data (JSON; fields:{' '}
                  {Object.entries(e.pause.fields)
                    .map(([n, f]) => `${n}: ${f.type}${f.required ? ' *' : ''}`)
                    .join(', ')}
                  )
                  <textarea
                    aria-label="Approval data"
                    rows={3}
                    value={answer}
                    onChange={(ev) => setAnswer(ev.target.value)}
                  />
                </label>
              ) : null}
              <div className="actions">
                <button type="button" disabled={resume.isPending} onClick={() => resume.mutate(true)}>
                  Approve
                </button>
                <button
                  type="button"
                  className="danger"
                  disabled={resume.isPending}
                  onClick={() => resume.mutate(false)}
                >
                  Reject
                </button>
              </div>
              <ErrorNotice error={resume.error} title="Could not answer the approval" />
            </div>
          ) : null}
          <div className="card">
            <h2>Timeline</h2>
            <Waterfall spans={e.traceSpans as Span[]} />
          </div>
          {e.error ? (
            <div className="card">
              <h2>Error</h2>
              <p className="notice error">{e.error}</p>
            </div>
          ) : null}
          <div className="columns">
            <div className="card">
              <h2>Inputs</h2>
              <JsonView value={e.inputs} empty="No inputs" />
            </div>
            <div className="card">
              <h2>Output</h2>
              <JsonView
                value={e.output}
                empty={e.status === 'completed' ? 'No output' : `No output (${e.status})`}
              />
            </div>
          </div>
          {cost ? (
            <div className="card">
              <h2>Cost</h2>
              <table>
                <tbody>
                  <tr>
                    <th>Total</th>
                    <td className="num">{usd(cost.total)}</td>
                  </tr>
                  <tr>
                    <th>Base charge</th>
                    <td className="num">{usd(cost.base)}</td>
                  </tr>
                  {Object.entries(cost.models ?? {}).map(([model, m]) => (
                    <tr key={model}>
                      <th>
                        <code>{model}</code> ({m.tokens.total} tokens)
                      </th>
                      <td className="num">{usd(m.total)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

function Fact(props: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}
