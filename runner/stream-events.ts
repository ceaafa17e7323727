// The events of one streaming execution, as the runner records them (db/execution-events.ts): the
// executor's calls are buffered and written in batches, one batch in flight at a time, so the first
// event of a quiet stream leaves at once and a burst of tokens costs one statement per round trip,
// not one per token. Executions that do not stream get no writer and write nothing.
import type { Db } from '../db/client.ts';
import { appendExecutionEvents } from '../db/execution-events.ts';
import type { Logger } from '../logger.ts';
import type { ExecutionEvents } from './executor/run.ts';

export interface StreamWriter extends ExecutionEvents {
  /** Resolves once every event so far is written (before the execution's end is recorded). */
  drain(): Promise<void>;
}

/**
 * A writer for an execution that streams; `selected` are the outputs asked for as `blockId.path`
 * ([] for all): block.completed carries only those, and only their blocks stream tokens.
 */
export function streamWriter(
  db: Db,
  log: Logger,
  executionId: string,
  selected: string[],
  info: { workflowId: string; startedAt: Date; asyncCommit?: boolean },
): StreamWriter {
  let buffer: { event: string; data: unknown }[] = [];
  let flushing: Promise<void> | null = null;
  let stopped = false;
  const picks = parseSelection(selected);

  const flush = async () => {
    while (buffer.length && !stopped) {
      const batch = buffer;
      buffer = [];
      try {
        // Null: the execution has ended (cancelled): nothing more is recorded for it.
        const written = await appendExecutionEvents(db, executionId, batch, {
          asyncCommit: info.asyncCommit === true,
        });
        if (written === null) stopped = true;
      } catch (err) {
        // The run goes on; a reader then sees a gap in block events but its end all the same.
        log.warn('could not record stream events', { executionId, err });
      }
    }
    buffer = [];
    flushing = null;
  };
  const push = (event: string, data: unknown) => {
    if (stopped) return;
    buffer.push({ event, data });
    flushing ??= flush();
  };

  push('execution.started', {
    executionId,
    workflowId: info.workflowId,
    startedAt: info.startedAt.toISOString(),
  });
  return {
    blockStarted: (blockId, blockType) => push('block.started', { blockId, blockType }),
    blockCompleted(blockId, blockType, output) {
      if (!picks) return push('block.completed', { blockId, blockType, success: true, output });
      const paths = picks.get(blockId);
      push('block.completed', {
        blockId,
        blockType,
        success: true,
        ...(paths ? { output: pick(output, paths) } : {}),
      });
    },
    blockFailed: (blockId, blockType, error) =>
      push('block.completed', { blockId, blockType, success: false, error }),
    tokens(blockId) {
      if (picks && !picks.has(blockId)) return undefined;
      return (chunk) => push('token', { blockId, chunk });
    },
    async drain() {
      while (flushing) await flushing;
    },
  };
}

/** `["agent.content", "fn"]` as block id → paths (an empty path: the whole output); null: all. */
function parseSelection(selected: string[]): Map<string, string[][]> | null {
  if (!selected.length) return null;
  const picks = new Map<string, string[][]>();
  for (const s of selected) {
    const [blockId, ...path] = s.split('.');
    if (!blockId) continue;
    const paths = picks.get(blockId) ?? [];
    paths.push(path);
    picks.set(blockId, paths);
  }
  return picks;
}

/** The selected paths of a block's output, keyed by path (`content`), or the whole output. */
function pick(output: unknown, paths: string[][]): unknown {
  if (paths.some((p) => p.length === 0)) return output;
  const picked: Record<string, unknown> = {};
  for (const path of paths) {
    let value: unknown = output;
    for (const key of path) {
      value =
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    picked[path.join('.')] = value ?? null;
  }
  return picked;
}
