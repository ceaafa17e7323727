// Trace spans: one per block run, kept in the execution log. Large values are cut so one chatty
// block cannot bloat the log row.
export interface Span {
  blockId: string;
  type: string;
  /** Set inside loop and parallel bodies: the iteration's index. */
  iteration?: number;
  /** The loop or parallel block this span ran inside. */
  parent?: string;
  status: 'success' | 'error';
  startedAt: string;
  endedAt: string;
  durationMs: number;
  input?: unknown;
  output?: unknown;
  error?: string;
  cost?: number;
  logs?: string[];
  /** The spans of a child workflow run by a `workflow` block. */
  children?: Span[];
}

const MAX_VALUE_CHARS = 32_768;

/** The value itself when small; otherwise a note with its start, so the span stays readable. */
export function traceValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined || text.length <= MAX_VALUE_CHARS) return value;
  return { truncated: true, chars: text.length, preview: text.slice(0, 1024) };
}
