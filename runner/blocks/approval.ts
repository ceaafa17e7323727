// Block `approval`: pauses the execution for a person (DESIGN.md "Run control"). The execution parks
// as `paused` (no runner slot, no worker thread, no job held), its Job record shows what is asked
// (`metadata.pause`), and a resume (POST /api/resume/…, or the signed link) records the answer as
// this block's output, then the execution goes on down the `approved` or `rejected` branch; when
// `timeoutMs` passes first, down the `timeout` branch. A branch without an edge ends that path.
// Only the workflow's own graph pauses (runner/executor/park.ts says why).
import { z } from 'zod';
import { inputSpec } from '../executor/inputs.ts';
import { MAX_WAIT_MS } from '../executor/park.ts';
import type { BlockType } from './block.ts';

export const APPROVAL_BRANCHES: readonly string[] = ['approved', 'rejected', 'timeout'];

const schema = z
  .object({
    /** What the approver is asked: shown on the link's page and in the Job record. */
    message: z.string().min(1).max(10_000),
    /** What the approver sends back with the answer, typed like workflow inputs; checked on resume. */
    fields: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'Field names are identifiers'), inputSpec)
      .refine((f) => Object.keys(f).length <= 50, 'At most 50 fields')
      .default({}),
    /** Without an answer by then, the `timeout` branch is taken; absent: the pause lasts until answered. */
    timeoutMs: z.number().int().min(1_000).max(MAX_WAIT_MS).optional(),
  })
  .strict();

/** The block's output: the answer, or the timeout's (approved false, by and at null). */
export interface ApprovalOutput {
  approved: boolean;
  data: Record<string, unknown>;
  /** Who answered: `user:<id>`, `key:<id>`, `link` or `admin`; null on timeout. */
  by: string | null;
  at: string | null;
  timedOut: boolean;
}

/** The branch an approval's output takes. */
export function approvalBranch(output: unknown): string {
  const o = output as ApprovalOutput;
  return o.timedOut ? 'timeout' : o.approved ? 'approved' : 'rejected';
}

export const approvalBlock: BlockType<z.output<typeof schema>> = {
  type: 'approval',
  schema,
  async run(config, ctx) {
    if (!ctx.pause)
      throw new Error(
        'An approval pauses the workflow itself: it cannot run inside a loop, a parallel or a child workflow',
      );
    const timeout: ApprovalOutput = { approved: false, data: {}, by: null, at: null, timedOut: true };
    return ctx.pause({
      message: config.message,
      fields: config.fields,
      timeoutMs: config.timeoutMs,
      timeout,
    });
  },
};
