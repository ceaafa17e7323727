// Trace spans: one per block run, kept in the execution log. Large values are cut so one chatty
// block cannot bloat the log row.
import type { TraceSpan } from '../../db/execution-logs.ts';

/** A span is the shape the execution log stores (db/execution-logs.ts). */
export type Span = TraceSpan;

const MAX_VALUE_CHARS = 32_768;

/** The value itself when small; otherwise a note with its start, so the span stays readable. */
export function traceValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined || text.length <= MAX_VALUE_CHARS) return value;
  return { truncated: true, chars: text.length, preview: text.slice(0, 1024) };
}
