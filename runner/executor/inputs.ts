// Checks an execution's inputs against the workflow's declared inputs: required ones present,
// types right, defaults filled in. Undeclared inputs pass through for the blocks to use.
import type { FieldIssue } from '../../errors.ts';
import type { InputSpec } from './definition.ts';

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function checkInputs(
  spec: Record<string, InputSpec>,
  given: Record<string, unknown>,
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
          path: ['inputs', name],
          message: `Required input "${name}" is missing`,
        });
      continue;
    }
    const actual = typeOf(value);
    if (s.type !== 'any' && actual !== s.type) {
      issues.push({
        code: 'invalid_type',
        path: ['inputs', name],
        message: `Expected ${s.type}, received ${actual}`,
      });
    }
  }
  return { inputs, issues };
}
