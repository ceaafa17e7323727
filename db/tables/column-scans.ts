// The passes a column change makes over a table's rows, inside the transaction that holds the
// table's lock (./columns.ts): find the rows that would break a constraint (no value for a required
// column, a value given twice in a unique one, a select value outside its options), convert every
// value to a new type, and rebuild a unique column's slots. Rows are read in pages in position
// order, so memory stays bounded whatever the table's size. A refusal names the first rows by id
// and position, and counts them all.
import { type FieldIssue, ServiceError } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { convertValue } from './conversions.ts';
import { claimSlots, type Slot } from './unique-values.ts';
import { type ColumnDef, uniqueKey } from './values.ts';

/** Rows named in a refusal; the message counts the rest. */
export const NAMED_ROWS = 20;
const PAGE = 1000;

type Named = { id: string; position: number | string; total: number | string };

/**
 * A 400 naming the first offending rows (`details` under ['rows', id, column]), counting them all:
 * "… (3 rows)", "… (45 rows, the first 20 named)".
 */
export function rowsRefusal(message: string, total: number, issues: FieldIssue[]): ServiceError {
  const rows = total === 1 ? '1 row' : `${total} rows`;
  const shown = total > issues.length ? `, the first ${issues.length} named` : '';
  return new ServiceError(400, `${message} (${rows}${shown})`, { details: issues });
}

const at = (position: number | string) => `Row at position ${Number(position)}`;

/** 400 when any row lacks a value of the column (what making it required would break). */
export async function refuseRowsWithout(tx: Queryable, tableId: string, column: string, message: string) {
  const rows = await tx.query<Named>(
    `select id, position, count(*) over () as total from table_rows
      where table_id = $1 and not (data ? $2::text) order by position limit ${NAMED_ROWS}`,
    [tableId, column],
  );
  if (!rows.length) return;
  const issues = rows.map((r) => ({
    code: 'required',
    path: ['rows', r.id, column],
    message: `${at(r.position)} has no value of ${column}`,
  }));
  throw rowsRefusal(message, Number(rows[0]?.total), issues);
}

/** 400 when any two rows hold one value of the column, naming each row after the first of its value. */
export async function refuseDuplicates(tx: Queryable, tableId: string, column: string, message: string) {
  // Stored values of one column are all of one type, in one canonical form, so jsonb equality is
  // the equality of their unique keys (numbers included: equal doubles print alike).
  const rows = await tx.query<Named & { first_id: string; first_position: number | string }>(
    `select id, position, first_id, first_position, count(*) over () as total from (
       select id, position, first_value(id) over w as first_id, first_value(position) over w as first_position,
              row_number() over w as n
         from table_rows where table_id = $1 and data ? $2::text
       window w as (partition by data->$2::text order by position)
     ) d where n > 1 order by position limit ${NAMED_ROWS}`,
    [tableId, column],
  );
  if (!rows.length) return;
  const issues = rows.map((r) => ({
    code: 'not_unique',
    path: ['rows', r.id, column],
    message: `${at(r.position)} holds the value of the row at position ${Number(r.first_position)} (${r.first_id})`,
  }));
  throw rowsRefusal(message, Number(rows[0]?.total), issues);
}

/** 400 when any row of a select column holds an option id that `keptIds` leaves out. */
export async function refuseOutsideOptions(
  tx: Queryable,
  tableId: string,
  column: string,
  keptIds: string[],
  message: string,
) {
  const rows = await tx.query<Named & { v: string }>(
    `select id, position, data->>$2::text as v, count(*) over () as total from table_rows
      where table_id = $1 and data ? $2::text and not (data->>$2::text = any($3::text[]))
      order by position limit ${NAMED_ROWS}`,
    [tableId, column, keptIds],
  );
  if (!rows.length) return;
  const issues = rows.map((r) => ({
    code: 'invalid_value',
    path: ['rows', r.id, column],
    message: `${at(r.position)} holds the option ${JSON.stringify(r.v)}, which the new options leave out`,
  }));
  throw rowsRefusal(message, Number(rows[0]?.total), issues);
}

type Valued = { id: string; position: number | string; v: unknown };

/** The rows holding a value of the column, a page at a time in position order. */
async function* pagesOf(tx: Queryable, tableId: string, column: string): AsyncGenerator<Valued[]> {
  let after: number | string = 0;
  for (;;) {
    const page: Valued[] = await tx.query<Valued>(
      `select id, position, data->$2::text as v from table_rows
        where table_id = $1 and data ? $2::text and position > $3::bigint order by position limit ${PAGE}`,
      [tableId, column, after],
    );
    if (page.length) yield page;
    if (page.length < PAGE) return;
    after = (page.at(-1) as { position: number | string }).position;
  }
}

/**
 * Converts every value of column `from.name` to the type of `to` (./conversions.ts), writing each
 * page back while every value so far has converted; a value that does not convert makes it a 400
 * naming the first such rows, once every row has been tried (the transaction then undoes the pages
 * written). Answers how many values changed.
 */
export async function convertColumn(tx: Queryable, tableId: string, from: ColumnDef, to: ColumnDef) {
  const issues: FieldIssue[] = [];
  let failed = 0;
  let changed = 0;
  for await (const page of pagesOf(tx, tableId, from.name)) {
    const ids: string[] = [];
    const values: unknown[] = [];
    for (const row of page) {
      const converted = convertValue(from, to, row.v);
      if (!converted.ok) {
        failed++;
        if (issues.length < NAMED_ROWS) {
          issues.push({
            code: 'not_convertible',
            path: ['rows', row.id, from.name],
            message: `${at(row.position)}: ${converted.message}`,
          });
        }
      } else if (JSON.stringify(converted.value) !== JSON.stringify(row.v)) {
        ids.push(row.id);
        values.push(converted.value);
      }
    }
    // Once a value has failed nothing more is written: the refusal undoes it all anyway.
    if (failed || !ids.length) continue;
    changed += ids.length;
    await tx.query(
      `update table_rows r set data = jsonb_set(r.data, array[$2::text], c.value), updated_at = now()
         from (select i.id, t.value from jsonb_array_elements($3::jsonb) with ordinality as t(value, ord)
                 join unnest($4::uuid[]) with ordinality as i(id, ord) on i.ord = t.ord) c
        where r.table_id = $1 and r.id = c.id`,
      [tableId, from.name, JSON.stringify(values), ids],
    );
  }
  if (failed) {
    throw rowsRefusal(`Column ${from.name} cannot become ${to.type}: values do not convert`, failed, issues);
  }
  return changed;
}

/** Gives every value of a unique column its slot (the column's old slots already released). */
export async function claimColumnSlots(tx: Queryable, tableId: string, column: string) {
  for await (const page of pagesOf(tx, tableId, column)) {
    const slots = page.map((r): Slot => ({ column, key: uniqueKey(r.v), rowId: r.id, path: [] }));
    await claimSlots(tx, tableId, slots);
  }
}
