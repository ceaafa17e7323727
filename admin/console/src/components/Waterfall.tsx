// An execution's trace as a waterfall: one row per span (a block's run; loop and parallel
// iterations and a child workflow's spans indented under theirs, in tree order: see span-tree.ts),
// each bar offset by when the span started and as wide as it lasted, green for success and red for
// error; a block with `retry` has a row per attempt, labelled with its number. A block's name opens
// the span's input, output, error, logs and cost.
import { Fragment, useState } from 'react';
import type { Span } from '../../../../runner/executor/trace.ts';
import { duration, usd } from '../format.ts';
import { spanRows } from '../span-tree.ts';
import { JsonView } from './JsonView.tsx';

export function Waterfall(props: { spans: Span[] }) {
  const [open, setOpen] = useState<string | null>(null);
  const rows = spanRows(props.spans);
  if (!rows.length) return <p className="muted">No spans recorded (yet).</p>;
  const t0 = Math.min(...rows.map((r) => Date.parse(r.span.startedAt)));
  const t1 = Math.max(...rows.map((r) => Date.parse(r.span.endedAt)));
  const total = Math.max(t1 - t0, 1);
  const pct = (ms: number) => `${((ms / total) * 100).toFixed(3)}%`;

  return (
    <table className="waterfall" aria-label="Trace spans">
      <colgroup>
        <col className="wf-label-col" />
        <col />
        <col className="wf-dur-col" />
      </colgroup>
      <thead>
        <tr className="wf-axis">
          <th>Block</th>
          <th className="wf-track">
            {[0, 0.25, 0.5, 0.75, 1].map((t) => (
              <span key={t} className="wf-tick" style={{ left: `${t * 100}%` }}>
                {duration(total * t)}
              </span>
            ))}
          </th>
          <th className="wf-dur">Duration</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ key, span, depth }) => {
          const start = Date.parse(span.startedAt) - t0;
          const isOpen = open === key;
          return (
            <Fragment key={key}>
              <tr className={`wf-row span ${span.status}${isOpen ? ' open' : ''}`} data-block={span.blockId}>
                <td className="wf-label" style={{ paddingLeft: `${0.5 + depth * 1.1}rem` }}>
                  <button
                    type="button"
                    className="link wf-id"
                    aria-expanded={isOpen}
                    onClick={() => setOpen(isOpen ? null : key)}
                  >
                    {span.blockId}
                  </button>
                  {span.iteration !== undefined ? <span className="muted"> #{span.iteration}</span> : null}
                  {span.attempt !== undefined ? (
                    <span className="muted wf-attempt"> attempt {span.attempt}</span>
                  ) : null}
                  <span className="wf-type">{span.type}</span>
                </td>
                <td className="wf-track">
                  <div
                    className={`wf-bar ${span.status}`}
                    style={{ left: pct(start), width: `max(${pct(span.durationMs)}, 3px)` }}
                    title={`${span.blockId}: ${duration(span.durationMs)} from +${duration(start)}`}
                  />
                </td>
                <td className="wf-dur">{duration(span.durationMs)}</td>
              </tr>
              {isOpen ? (
                <tr className="wf-detail">
                  <td colSpan={3}>
                    <div className="detail-grid">
                      <div>
                        <h4>Input</h4>
                        <JsonView value={span.input} />
                      </div>
                      <div>
                        <h4>Output</h4>
                        <JsonView value={span.output} />
                      </div>
                    </div>
                    {span.error ? <p className="notice error">{span.error}</p> : null}
                    {span.logs?.length ? (
                      <>
                        <h4>Logs</h4>
                        <pre className="json">{span.logs.join('\n')}</pre>
                      </>
                    ) : null}
                    {span.cost !== undefined ? <p className="muted">Cost {usd(span.cost)}</p> : null}
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}
