// The rows of a trace waterfall: the spans as a tree, depth first, so every span is drawn right
// under the span it ran in. Loop and parallel iterations are stored flat beside their block, naming
// it only by id (`parent`), and they are stored as they ended: an iteration ends, and so is stored,
// before its block, and often starts in the same millisecond. Ordering by start time alone therefore
// put children above their parent, or under a sibling that started between two iterations.
import type { Span } from '../../../runner/executor/trace.ts';

export interface SpanRow {
  /** Unique in one trace: the path of sibling positions from the top. */
  key: string;
  span: Span;
  depth: number;
}

interface Timed {
  span: Span;
  index: number;
  start: number;
  end: number;
}

/** Earlier start first; iterations of one block by their index; else as stored. */
const byStart = (a: Timed, b: Timed) =>
  a.start - b.start || (a.span.iteration ?? -1) - (b.span.iteration ?? -1) || a.index - b.index;

/**
 * The run of block `parent` an iteration span belongs to. A block inside a loop body runs once per
 * iteration, so several spans may carry its id, and within one millisecond start times tell them
 * apart no better than ids. The runner stores a span when it ends, so an iteration's own run is the
 * first run of the block stored after it that had started by then; failing that (spans stored in
 * another order), the latest run that was going when it started, else the latest started before it.
 */
function parentRun(runs: Timed[], child: Timed): Timed | undefined {
  // runs are in stored order: find the first stored after the child, then the first of those begun.
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((runs[mid] as Timed).index <= child.index) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < runs.length; i++) {
    const run = runs[i] as Timed;
    if (run.start <= child.start) return run;
  }
  const before = runs.filter((r) => r !== child && r.start <= child.start);
  const latest = (list: Timed[]) =>
    list.reduce<Timed | undefined>((a, r) => (!a || r.start >= a.start ? r : a), undefined);
  return latest(before.filter((r) => r.end >= child.start)) ?? latest(before);
}

/** The spans in tree order, each followed by its iterations and then by its child workflow's spans. */
export function spanRows(spans: Span[], depth = 0, prefix = ''): SpanRow[] {
  const timed: Timed[] = spans.map((span, index) => {
    const start = Date.parse(span.startedAt);
    const end = Date.parse(span.endedAt);
    return { span, index, start, end: Number.isNaN(end) ? start : end };
  });
  const runsOf = new Map<string, Timed[]>();
  for (const t of timed) {
    const runs = runsOf.get(t.span.blockId) ?? [];
    runs.push(t);
    runsOf.set(t.span.blockId, runs);
  }
  const kids = new Map<Timed, Timed[]>();
  const roots: Timed[] = [];
  for (const t of timed) {
    const parent = t.span.parent === undefined ? undefined : parentRun(runsOf.get(t.span.parent) ?? [], t);
    if (!parent) roots.push(t);
    else if (kids.has(parent)) kids.get(parent)?.push(t);
    else kids.set(parent, [t]);
  }

  const rows: SpanRow[] = [];
  const seen = new Set<Timed>();
  const visit = (siblings: Timed[], level: number, path: string) => {
    [...siblings].sort(byStart).forEach((t, i) => {
      if (seen.has(t)) return;
      seen.add(t);
      const key = `${path}${i}:${t.span.blockId}`;
      rows.push({ key, span: t.span, depth: level });
      visit(kids.get(t) ?? [], level + 1, `${key}/`);
      // A child workflow's spans, as the runner nested them (the log documents them as opaque).
      rows.push(...spanRows((t.span.children ?? []) as Span[], level + 1, `${key}>`));
    });
  };
  visit(roots, depth, prefix);
  // Spans that name each other as parents (not written by the runner) are still shown, at the top.
  const left = timed.filter((t) => !seen.has(t));
  if (left.length) visit(left, depth, `${prefix}~`);
  return rows;
}
