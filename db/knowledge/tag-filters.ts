// Tag filters of knowledge search, compiled to parameterised SQL over the document columns
// `d.tag_<slot>`. A tag name is resolved to its slot in every searched knowledge base (it may sit
// in different slots in different bases), its operator and operands are checked against its type,
// and only then does a column name from the fixed slot list reach the SQL; values are parameters.
//
// Semantics worth knowing: text comparisons ignore case and take `%` and `_` literally; dates
// compare as instants (a date without a time is midnight UTC); between is inclusive. A document
// without a value for the tag matches neq and not_contains (it is not equal to the value and does
// not contain it) and matches no other operator.
import type { FieldIssue } from '../../errors.ts';
import { ServiceError } from '../../errors.ts';
import {
  checkTagValue,
  TAG_SQL_TYPE,
  type TagDefinition,
  type TagType,
  type TagValueCheck,
  tagColumn,
} from './tags.ts';

export const TAG_FILTER_OPERATORS = [
  'eq',
  'neq',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
] as const;
export type TagFilterOperator = (typeof TAG_FILTER_OPERATORS)[number];

export const OPERATORS_BY_TYPE: Readonly<Record<TagType, readonly TagFilterOperator[]>> = {
  text: ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between'],
  date: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between'],
  boolean: ['eq', 'neq'],
};

export interface TagFilter {
  tagName: string;
  operator: TagFilterOperator;
  value: string | number | boolean;
  /** The upper bound of between (inclusive); no other operator takes one. */
  valueTo?: string | number | boolean | undefined;
}

/** A searched knowledge base and its tag definitions. */
export interface FilteredBase {
  id: string;
  tags: readonly TagDefinition[];
}

const COMPARE = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
/** A LIKE pattern matching the text literally: its `\`, `%` and `_` escaped with `\`. */
export const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * An operand checked against the tag's type, as the parameter its cast reads: a number as its
 * shortest round-trip text, a boolean as a JS boolean (postgres.js reads any string as false).
 */
function operand(tagName: string, type: TagType, v: unknown): TagValueCheck {
  const checked = checkTagValue(type, v);
  if (!checked.ok) return { ok: false, message: `Tag ${tagName} ${checked.message}` };
  return type === 'number' ? { ok: true, value: JSON.stringify(checked.value) } : checked;
}

/** The condition of one operator on one column, its operands already parameters. */
function condition(type: TagType, op: TagFilterOperator, col: string, v: string, to: string | null): string {
  if (type === 'text') {
    // v is a LIKE pattern here; ILIKE ignores case, and every operator escapes with `\`.
    const like = `${col} ilike ${v} escape '\\'`;
    return op === 'neq' || op === 'not_contains' ? `not coalesce(${like}, false)` : like;
  }
  const cast = `::${TAG_SQL_TYPE[type]}`;
  if (op === 'eq') return `${col} = ${v}${cast}`;
  if (op === 'neq') return `${col} is distinct from ${v}${cast}`;
  if (op === 'between') return `${col} between ${v}${cast} and ${to}${cast}`;
  return `${col} ${COMPARE[op as keyof typeof COMPARE]} ${v}${cast}`;
}

const LIKE_SHAPE: Partial<Record<TagFilterOperator, (s: string) => string>> = {
  eq: (s) => s,
  neq: (s) => s,
  contains: (s) => `%${s}%`,
  not_contains: (s) => `%${s}%`,
  starts_with: (s) => `${s}%`,
  ends_with: (s) => `%${s}`,
};

/**
 * The SQL condition (over documents aliased `d`) that all filters stand for, 'true' for none;
 * its parameters are appended to `params`. An unknown tag, a tag missing from one of the bases or
 * typed differently in two, an operator its type does not take, or an operand of the wrong type
 * is a 400 whose details name the filter under `tagFilters.<i>`.
 */
export function compileTagFilters(
  filters: readonly TagFilter[] | undefined,
  bases: readonly FilteredBase[],
  params: unknown[],
): string {
  if (!filters?.length) return 'true';
  const issues: FieldIssue[] = [];
  const parts: string[] = [];
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  for (const [i, f] of filters.entries()) {
    const issue = (field: string, message: string, code = 'invalid_value') =>
      issues.push({ code, path: ['tagFilters', i, field], message });
    const found = bases.map((b) => ({ base: b, tag: b.tags.find((t) => t.name === f.tagName) }));
    const missing = found.filter((x) => !x.tag);
    if (missing.length === bases.length) {
      issue('tagName', `No tag named ${f.tagName}`);
      continue;
    }
    if (missing.length) {
      issue(
        'tagName',
        `Knowledge base ${missing.map((m) => m.base.id).join(', ')} has no tag named ${f.tagName}`,
      );
      continue;
    }
    const tags = found.map((x) => x.tag as TagDefinition);
    const type = (tags[0] as TagDefinition).type;
    if (tags.some((t) => t.type !== type)) {
      issue('tagName', `Tag ${f.tagName} has different types in the searched knowledge bases`);
      continue;
    }
    if (!OPERATORS_BY_TYPE[type].includes(f.operator)) {
      issue('operator', `Operator ${f.operator} does not apply to ${type} tag ${f.tagName}`);
      continue;
    }
    const from = operand(f.tagName, type, f.value);
    if (!from.ok) issue('value', from.message, 'invalid_type');
    let to: TagValueCheck | null = null;
    if (f.operator === 'between') {
      to =
        f.valueTo === undefined
          ? { ok: false, message: 'between needs valueTo' }
          : operand(f.tagName, type, f.valueTo);
      if (!to.ok) issue('valueTo', to.message, 'invalid_type');
      else if (from.ok && compareOperands(type, String(to.value), String(from.value)) < 0) {
        issue('valueTo', 'valueTo must not be below value');
      }
    } else if (f.valueTo !== undefined) {
      issue('valueTo', 'Only between takes valueTo', 'unrecognized_keys');
    }
    if (!from.ok || (to && !to.ok)) continue;
    const shape = type === 'text' ? LIKE_SHAPE[f.operator] : undefined;
    const v = add(shape ? shape(likeLiteral(String(from.value))) : from.value);
    const upper = to?.ok ? add(to.value) : null;
    // Bases that keep the tag in one slot share one condition; a base that keeps it elsewhere gets
    // its own, guarded by its id. Usually every base agrees and no guard is needed.
    const bySlot = new Map<string, string[]>();
    for (const [j, t] of tags.entries()) {
      bySlot.set(t.slot, [...(bySlot.get(t.slot) ?? []), (bases[j] as FilteredBase).id]);
    }
    if (bySlot.size === 1) {
      parts.push(`(${condition(type, f.operator, `d.${tagColumn(tags[0]?.slot as string)}`, v, upper)})`);
    } else {
      const alternatives = [...bySlot].map(
        ([slot, ids]) =>
          `(d.knowledge_base_id = any(${add(ids)}::uuid[]) and ${condition(type, f.operator, `d.${tagColumn(slot)}`, v, upper)})`,
      );
      parts.push(`(${alternatives.join(' or ')})`);
    }
  }
  if (issues.length) throw new ServiceError(400, 'Invalid tag filters', { details: issues });
  return parts.length ? parts.join(' and ') : 'true';
}

function compareOperands(type: TagType, a: string, b: string): number {
  if (type === 'number') return Number(a) - Number(b);
  // ISO instants of four-digit years: text order is time order.
  return a < b ? -1 : a > b ? 1 : 0;
}
