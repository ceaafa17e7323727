// The last hour, minute by minute, drawn in SVG: finished executions as stacked bars (completed
// below, failed above; left axis) and the p50 and p95 durations as lines (right axis). A minute
// with nothing finished leaves a gap in the lines rather than a drop to zero. The chart starts at
// the first minute with runs, showing at least the last MIN_MINUTES: a few minutes of runs spread
// over the whole hour were slivers a few pixels wide.
import { duration } from '../format.ts';

export interface MinutePoint {
  minute: string;
  completed: number;
  failed: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

const W = 960;
const H = 280;
const M = { top: 26, right: 64, bottom: 30, left: 44 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;
/** The shortest stretch drawn, in minutes: a bar is then about 40 of the chart's 960 units wide. */
export const MIN_MINUTES = 15;

/** The minutes to draw: from the first with runs (or MIN_MINUTES back, if later) to the last. */
export function shownMinutes<P extends { completed: number; failed: number }>(points: P[]): P[] {
  const first = points.findIndex((p) => p.completed + p.failed > 0);
  const from = Math.min(first === -1 ? points.length : first, points.length - MIN_MINUTES);
  return points.slice(Math.max(0, from));
}

/** How the chart's heading names the stretch it shows. */
export const stretchName = (minutes: number) => (minutes >= 60 ? 'last hour' : `last ${minutes} minutes`);

/** The smallest 1, 2 or 5 × 10^k at or above n, so the axis ticks are round numbers. */
export function niceCeiling(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

const hhmm = (iso: string) =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });

export function ActivityChart(props: { points: MinutePoint[] }) {
  const points = shownMinutes(props.points);
  const n = Math.max(points.length, 1);
  // About six time labels whatever the stretch: every 10 minutes of an hour, every 3 of 15.
  const labelEvery = Math.max(1, Math.ceil(n / 6));
  const slot = PW / n;
  const countMax = niceCeiling(Math.max(0, ...points.map((p) => p.completed + p.failed)));
  const msMax = niceCeiling(Math.max(0, ...points.map((p) => p.p95Ms ?? p.p50Ms ?? 0)));
  const yCount = (v: number) => M.top + PH - (v / countMax) * PH;
  const yMs = (v: number) => M.top + PH - (v / msMax) * PH;
  const x = (i: number) => M.left + i * slot + slot / 2;

  // One path with a move at every gap.
  const line = (pick: (p: MinutePoint) => number | null) => {
    let d = '';
    let pen = false;
    points.forEach((p, i) => {
      const v = pick(p);
      if (v === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${yMs(v).toFixed(1)}`;
      pen = true;
    });
    return d;
  };
  const dots = (pick: (p: MinutePoint) => number | null, cls: string) =>
    points.map((p, i) => {
      const v = pick(p);
      return v === null ? null : (
        <circle key={`${cls}${p.minute}`} className={cls} cx={x(i)} cy={yMs(v)} r={2.2} />
      );
    });
  // Gridlines at fifths; a count is labelled only where it is a whole number of runs.
  const ticks = [0, 0.2, 0.4, 0.6, 0.8, 1];

  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Executions per minute and p50/p95 duration over the ${stretchName(points.length)}`}
      >
        {ticks.map((t) => (
          <g key={t}>
            <line
              className="grid"
              x1={M.left}
              x2={M.left + PW}
              y1={M.top + PH * (1 - t)}
              y2={M.top + PH * (1 - t)}
            />
            {Number.isInteger(Math.round(countMax * t * 1000) / 1000) ? (
              <text className="axis" x={M.left - 6} y={M.top + PH * (1 - t) + 4} textAnchor="end">
                {Math.round(countMax * t)}
              </text>
            ) : null}
            <text className="axis ms" x={M.left + PW + 6} y={M.top + PH * (1 - t) + 4}>
              {duration(msMax * t)}
            </text>
          </g>
        ))}
        {points.map((p, i) => {
          const bw = Math.max(1, slot * 0.7);
          const bx = x(i) - bw / 2;
          return (
            <g key={p.minute}>
              <title>
                {`${hhmm(p.minute)}: ${p.completed} completed, ${p.failed} failed; p50 ${duration(p.p50Ms)}, p95 ${duration(p.p95Ms)}`}
              </title>
              {/* An invisible column, so the tooltip answers anywhere above the minute. */}
              <rect x={M.left + i * slot} y={M.top} width={slot} height={PH} fill="transparent" />
              {p.completed > 0 ? (
                <rect
                  className="bar completed"
                  x={bx}
                  width={bw}
                  y={yCount(p.completed)}
                  height={M.top + PH - yCount(p.completed)}
                />
              ) : null}
              {p.failed > 0 ? (
                <rect
                  className="bar failed"
                  x={bx}
                  width={bw}
                  y={yCount(p.completed + p.failed)}
                  height={yCount(p.completed) - yCount(p.completed + p.failed)}
                />
              ) : null}
            </g>
          );
        })}
        <path className="line p50" d={line((p) => p.p50Ms)} />
        <path className="line p95" d={line((p) => p.p95Ms)} />
        {dots((p) => p.p50Ms, 'dot p50')}
        {dots((p) => p.p95Ms, 'dot p95')}
        <line className="axis-line" x1={M.left} x2={M.left + PW} y1={M.top + PH} y2={M.top + PH} />
        {points.map((p, i) =>
          (i % labelEvery === 0 && points.length - 1 - i >= labelEvery / 2) || i === points.length - 1 ? (
            <text key={p.minute} className="axis" x={x(i)} y={H - 10} textAnchor="middle">
              {hhmm(p.minute)}
            </text>
          ) : null,
        )}
        <text className="axis" x={M.left - 6} y={12} textAnchor="end">
          runs
        </text>
        <text className="axis ms" x={M.left + PW + 6} y={12}>
          duration
        </text>
      </svg>
      <figcaption className="legend">
        <span className="key completed">completed</span>
        <span className="key failed">failed</span>
        <span className="key p50">p50 duration</span>
        <span className="key p95">p95 duration</span>
      </figcaption>
    </figure>
  );
}
