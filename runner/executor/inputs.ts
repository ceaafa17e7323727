// Checks an execution's inputs against the workflow's declared inputs: required ones present,
// types right, defaults filled in. Undeclared inputs pass through for the blocks to use.
import { z } from 'zod';
import type { FieldIssue } from '../../errors.ts';

/** One declared input of a workflow (and one field an approval asks for: runner/blocks/approval.ts). */
export const inputSpec = z
  .object({
    type: z.enum(['string', 'number', 'boolean', 'object', 'array', 'any']).default('any'),
    required: z.boolean().default(false),
    default: z.unknown().optional(),
    description: z.string().max(1000).optional(),
  })
  .strict();

export type InputSpec = z.output<typeof inputSpec>;

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function checkInputs(
  spec: Record<string, InputSpec>,
  given: Record<string, unknown>,
  /** The issues' path root: `inputs` for workflow inputs, `data` for an approval's fields. */
  root = 'inputs',
): { inputs: Record<string, unknown>; issues: FieldIssue[] } {
  const inputs: Record<string, unknown> = { ...given };
  const issues: FieldIssue[] = [];
  for (const [name, s] of Object.entries(spec)) {
    const value = given[name];
    if (value === undefined || value === null) {
      if (s.default !== undefined) inputs[name] = structuredClone(s.default);
      else if (s.required)
        issues.push({
          code: 'invalid_type',
          path: [root, name],
          message: `Required input "${name}" is missing`,
        });
      continue;
    }
    const actual = typeOf(value);
    if (s.type !== 'any' && actual !== s.type) {
      issues.push({
        code: 'invalid_type',
        path: [root, name],
        message: `Expected ${s.type}, received ${actual}`,
      });
    }
  }
  return { inputs, issues };
}
