// The one zod error map of the service, so the public API, the admin plane, the admin CLI and the
// runner word a field's problems alike: a missing field reads "workspaceId is required" rather than
// zod's "Invalid input: expected string, received undefined". Every other issue keeps zod's words,
// and a message a schema gives itself always wins. Importing this module installs the map (zod's
// configuration is global to the process); the entry points and the modules that parse input
// import it, so it holds whichever of them a process starts with.
import { z } from 'zod';

type RawIssue = Parameters<NonNullable<z.core.$ZodConfig['customError']>>[0];

// The issues zod raises for a value that is not there (a missing key reads as undefined): a type,
// a literal or enum value, or a union of them.
const MISSING = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/** The message for a missing value: named by its field, or by its place in a list. */
function missingMessage(path: readonly PropertyKey[]): string {
  const last = path.at(-1);
  if (last === undefined) return 'A value is required';
  if (typeof last === 'number') return `Item ${last} is required`;
  return `${String(last)} is required`;
}

export function zodMessage(issue: RawIssue): string | undefined {
  if (MISSING.has(issue.code) && issue.input === undefined) return missingMessage(issue.path ?? []);
  return undefined;
}

z.config({ customError: zodMessage });
