// The options of a `select` column, in the original service's shape: `{id, name}`, where the id is
// what a row stores (so an option can be renamed without touching a row) and the name is what
// people read. A value is written as an option's id or its name (exact, then ignoring case) and
// stored as the id. Kept apart from ./values.ts, which checks values against them.
import { z } from 'zod';

export interface SelectOption {
  id: string;
  name: string;
}

export const MAX_SELECT_OPTIONS = 100;
const MAX_OPTION_TEXT = 100;

// Text Postgres can store (as ./values.ts's isStorableText; not imported, to keep the two free of
// a cycle), not blank.
const optionText = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `An option ${what} is 1 to ${MAX_OPTION_TEXT} characters`)
    .max(MAX_OPTION_TEXT, `An option ${what} is 1 to ${MAX_OPTION_TEXT} characters`)
    .refine((s) => s.isWellFormed() && !s.includes('\u0000'), 'Not storable text');

/**
 * Options as given: `{id, name}`, or `{name}` or a bare name when the id may be chosen here (that
 * of an existing option of the same name, else the name itself).
 */
export const selectOptionsInput = z
  .array(
    z.union([
      optionText('name'),
      z.object({ id: optionText('id').optional(), name: optionText('name') }).strict(),
    ]),
  )
  .min(1, 'A select column needs at least one option')
  .max(MAX_SELECT_OPTIONS, `A select column has at most ${MAX_SELECT_OPTIONS} options`);

export type SelectOptionsInput = z.infer<typeof selectOptionsInput>;

/**
 * The options with their ids, keeping the id of an existing option given again by name (so a
 * client that re-sends the names does not orphan the rows that hold them); issues for ids or
 * names given twice (names ignoring case, as values are matched).
 */
export function normalizeOptions(
  input: SelectOptionsInput,
  existing: readonly SelectOption[] = [],
): { options: SelectOption[]; issues: { path: (string | number)[]; message: string }[] } {
  const idOfName = new Map(existing.map((o) => [o.name.toLowerCase(), o.id]));
  const options = input.map((o) => {
    const { id, name } = typeof o === 'string' ? { id: undefined, name: o } : o;
    return { id: id ?? idOfName.get(name.toLowerCase()) ?? name, name };
  });
  const issues: { path: (string | number)[]; message: string }[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const [i, o] of options.entries()) {
    if (ids.has(o.id)) issues.push({ path: [i, 'id'], message: `Option id ${o.id} is given twice` });
    if (names.has(o.name.toLowerCase())) {
      issues.push({ path: [i, 'name'], message: `Option name ${o.name} is given twice` });
    }
    ids.add(o.id);
    names.add(o.name.toLowerCase());
  }
  return { options, issues };
}

/**
 * The id of the option a value names: its id, else its name exactly, else its name ignoring case;
 * null when none does. Numbers and booleans name an option by their text ("3", "true").
 */
export function resolveOption(options: readonly SelectOption[], value: unknown): string | null {
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : null;
  if (text === null) return null;
  const lower = text.toLowerCase();
  return (
    options.find((o) => o.id === text)?.id ??
    options.find((o) => o.name === text)?.id ??
    options.find((o) => o.name.toLowerCase() === lower)?.id ??
    null
  );
}

/** The name of the option a stored id stands for (the id itself for an id no option has). */
export function optionName(options: readonly SelectOption[], id: string): string {
  return options.find((o) => o.id === id)?.name ?? id;
}

/** How a refusal lists the options: their names, the first few. */
export function describeOptions(options: readonly SelectOption[]): string {
  const names = options.slice(0, 10).map((o) => o.name);
  return options.length > 10 ? `${names.join(', ')}, …` : names.join(', ');
}
