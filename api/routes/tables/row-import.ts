// Imports the rows of a CSV file into a table: the header row names the columns, each cell's text
// becomes its column's value (db/tables/cell-text.ts), and the rows go in through the store's batch
// insert, a thousand at a time, in one transaction: the import is committed whole or not at all, so
// no answer is ever lost after some of its rows were kept. In mode `all` a bad row fails the whole
// import (400 listing the first problems); in mode `skip` the good rows go in and the bad ones are
// reported. A bad row is one that does not parse, has the wrong number of fields, holds a value its
// column does not take, lacks a required value, repeats a unique value (of the table or of an earlier
// line), or would pass the table's row cap.

import type { Queryable } from '../../../db/client.ts';
import { cellValue } from '../../../db/tables/cell-text.ts';
import {
  getTable,
  insertRows,
  MAX_BATCH_ROWS,
  type Table,
  type TableRef,
} from '../../../db/tables/tables.ts';
import { type ColumnDef, checkRow, MAX_COLUMN_NAME } from '../../../db/tables/values.ts';
import { type FieldIssue, ServiceError } from '../../../errors.ts';
import { readCsv } from './csv-reader.ts';

export const IMPORT_MODES = ['all', 'skip'] as const;
export type ImportMode = (typeof IMPORT_MODES)[number];

/** How many problems an answer lists; the counts cover them all. */
export const MAX_REPORTED = 100;

/** One problem with one line of the file (a row may have several). */
export interface ImportProblem {
  line: number;
  /** The column, when the problem is one value's. */
  column?: string;
  code: string;
  message: string;
}

export interface ImportResult {
  insertedCount: number;
  /** Rows not imported (mode skip). */
  skippedCount: number;
  /** The first problems, by line. */
  problems: ImportProblem[];
  /** The table's columns the header names, and those it leaves out (they get no value). */
  mappedColumns: string[];
  unmappedColumns: string[];
}

const headerIssue = (at: string | number, code: string, message: string): FieldIssue => ({
  code,
  path: ['file', 'header', at],
  message,
});

/** The column of each header field; a 400 naming every unknown, repeated or missing name. */
function mapHeader(columns: readonly ColumnDef[], fields: string[]): ColumnDef[] {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const issues: FieldIssue[] = [];
  const unknown: string[] = [];
  const seen = new Set<string>();
  const mapped = fields.map((raw, i) => {
    const name = raw.trim();
    const column = byName.get(name);
    // A name longer than any column's is shown cut: a header field may be a megabyte long.
    const shown = name.length > MAX_COLUMN_NAME + 10 ? `${name.slice(0, MAX_COLUMN_NAME)}…` : name;
    if (!name) issues.push(headerIssue(i, 'invalid_value', `Header field ${i + 1} is empty`));
    else if (seen.has(name))
      issues.push(headerIssue(shown, 'invalid_value', `Column ${shown} is named twice`));
    else if (!column) {
      unknown.push(shown);
      issues.push(headerIssue(shown, 'unrecognized_keys', `No column named ${shown}`));
    }
    seen.add(name);
    return column as ColumnDef;
  });
  const missing = columns.filter((c) => c.required && !seen.has(c.name)).map((c) => c.name);
  for (const name of missing) {
    issues.push(headerIssue(name, 'required', `Column ${name} is required: the header must name it`));
  }
  if (issues.length) {
    const message = unknown.length
      ? `The header names columns the table does not have: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}`
      : missing.length
        ? `The header lacks required columns: ${missing.join(', ')}`
        : 'Invalid header row';
    throw new ServiceError(400, message, { details: issues.slice(0, MAX_REPORTED) });
  }
  return mapped;
}

interface Pending {
  line: number;
  values: Record<string, unknown>;
}

/**
 * Reads the file and imports its rows into the table (see the top of this file). Answers the
 * counts and the first problems; in mode `all`, bad rows are a 400 and nothing is kept.
 * `onImported` runs last in the import's transaction (its audit entry): kept only with the rows.
 */
export function importRows(
  db: Queryable,
  ref: TableRef,
  bytes: AsyncIterable<Uint8Array>,
  mode: ImportMode,
  onImported: (tx: Queryable, table: Table, result: ImportResult) => Promise<void> = async () => {},
): Promise<ImportResult> {
  return db.transaction(async (tx) => {
    const batchWriter = joined(tx);
    const table = await getTable(tx, ref);
    const columns = table.schema.columns;
    // The rows the cap allows this import (read again if a writer got in before its first batch).
    let room = table.maxRows - table.rowCount;
    const capMessage = () => `Row limit reached: the table holds at most ${table.maxRows} rows`;
    let header: ColumnDef[] | null = null;
    let insertedCount = 0;
    let skippedCount = 0;
    let failed = false;
    let batch: Pending[] = [];
    // The first problems by line: a batch's unique values are judged when it is written, after the
    // lines that follow it were read, so the list is kept sorted and cut rather than closed when full.
    let problems: ImportProblem[] = [];
    const firstProblems = () => {
      problems = problems.sort((x, y) => x.line - y.line).slice(0, MAX_REPORTED);
      return problems;
    };
    const bad = (line: number, issues: { column?: string | undefined; code: string; message: string }[]) => {
      skippedCount++;
      failed = true;
      for (const i of issues) {
        const column = i.column !== undefined ? { column: i.column } : {};
        problems.push({ line, ...column, code: i.code, message: i.message });
      }
      if (problems.length > 2 * MAX_REPORTED) firstProblems();
    };

    /** Inserts the batch; rows the store refuses are reported (and, in mode skip, the rest retried). */
    const flush = async () => {
      let rows = batch;
      batch = [];
      while (rows.length && !(mode === 'all' && failed)) {
        const fits = Math.max(room - insertedCount, 0);
        for (const r of rows.slice(fits)) bad(r.line, [{ code: 'too_big', message: capMessage() }]);
        rows = rows.slice(0, fits);
        if (!rows.length || (mode === 'all' && failed)) return;
        try {
          await insertRows(
            batchWriter,
            ref,
            rows.map((r) => r.values),
          );
          insertedCount += rows.length;
          return;
        } catch (err) {
          const refused = refusedRows(err, rows);
          if (refused === 'cap') {
            // A writer got in before this import's first batch took the table's lock.
            const now = await getTable(tx, ref);
            if (now.maxRows - now.rowCount >= rows.length) throw err;
            room = insertedCount + now.maxRows - now.rowCount;
            continue;
          }
          if (!refused) throw err;
          for (const [index, issues] of refused) bad((rows[index] as Pending).line, issues);
          rows = rows.filter((_, i) => !refused.has(i));
        }
      }
    };

    for await (const item of readCsv(bytes)) {
      if (!header) {
        if (item.error !== undefined)
          throw new ServiceError(400, `Line ${item.line}: the header row is malformed: ${item.error}`);
        header = mapHeader(columns, item.fields);
        continue;
      }
      // In mode all nothing is written after the first bad row: enough found, the rest is not read.
      if (mode === 'all' && problems.length >= MAX_REPORTED) break;
      if (item.error !== undefined) {
        bad(item.line, [{ code: 'invalid_format', message: item.error }]);
        continue;
      }
      if (item.fields.length !== header.length) {
        const message = `The line has ${item.fields.length} fields; the header has ${header.length}`;
        bad(item.line, [{ code: 'invalid_value', message }]);
        continue;
      }
      const row = rowOf(columns, header, item.fields);
      if (row.problems.length) {
        bad(item.line, row.problems);
        continue;
      }
      if (mode === 'all' && failed) continue;
      // At the cap, the batch is written first: rows it loses to unique values leave room again.
      if (insertedCount + batch.length >= room && batch.length) await flush();
      if (insertedCount + batch.length >= room) {
        bad(item.line, [{ code: 'too_big', message: capMessage() }]);
        continue;
      }
      batch.push({ line: item.line, values: row.values });
      if (batch.length >= MAX_BATCH_ROWS) await flush();
    }
    if (!header) throw new ServiceError(400, 'The file is empty: it needs a header row naming the columns');
    await flush();
    if (mode === 'all' && failed) throw nothingImported(firstProblems(), skippedCount);
    const names = new Set(header.map((c) => c.name));
    const result = {
      insertedCount,
      skippedCount,
      problems: firstProblems(),
      mappedColumns: columns.filter((c) => names.has(c.name)).map((c) => c.name),
      unmappedColumns: columns.filter((c) => !names.has(c.name)).map((c) => c.name),
    };
    await onImported(tx, table, result);
    return result;
  });
}

/**
 * The import's transaction as the store's batch insert is given it: the insert's own unit of work
 * joins it, where it would otherwise open a savepoint per batch. Savepoints made every batch slower
 * than the one before (a write updates the table's row, which each new row's foreign key then reads
 * through every version of it the transaction made, and past 64 subtransactions Postgres looks each
 * one up on disk): 100 MB imported at ~4,000 rows/s instead of ~30,000. Joining is safe because the
 * store refuses a batch before it writes any of it (values, the row cap and unique values are all
 * checked first), so a refused batch leaves the transaction as it was; a statement that failed
 * anyway would fail the import, which is one transaction, whole.
 */
function joined(tx: Queryable): Queryable {
  const joinedTx: Queryable = {
    query: (text, params) => tx.query(text, params),
    exec: (script) => tx.exec(script),
    script: (text) => tx.script(text),
    transaction: (fn) => fn(joinedTx),
  };
  return joinedTx;
}

/** A line's values, converted by column and checked; or its problems. */
function rowOf(columns: readonly ColumnDef[], header: ColumnDef[], fields: string[]) {
  const data: Record<string, unknown> = {};
  const problems: { column: string; code: string; message: string }[] = [];
  for (const [i, column] of header.entries()) {
    const text = fields[i] as string;
    if (text === '') continue;
    const v = cellValue(column, text);
    if (v.ok) data[column.name] = v.value;
    else problems.push({ column: column.name, code: v.code, message: v.message });
  }
  if (problems.length) return { values: data, problems };
  const issues: FieldIssue[] = [];
  const checked = checkRow(columns, data, [], issues);
  for (const i of issues) problems.push({ column: String(i.path[0]), code: i.code, message: i.message });
  return { values: checked.values, problems };
}

/**
 * The rows of a batch the store refused, by index, with their problems; 'cap' when the batch would
 * pass the row cap; null when the refusal names no row (not the file's fault: it is thrown on).
 */
function refusedRows(err: unknown, rows: Pending[]) {
  if (!(err instanceof ServiceError) || err.status !== 400 || !err.details?.length) return null;
  if (err.details.some((d) => d.code === 'too_big' && d.path.length === 1)) return 'cap' as const;
  const refused = new Map<number, { column?: string; code: string; message: string }[]>();
  for (const d of err.details) {
    const index = d.path[1];
    if (d.path[0] !== 'rows' || typeof index !== 'number' || !rows[index]) return null;
    // The store names other rows of the batch by index: name their lines instead.
    const message = d.message.replace(/\brows\.(\d+)\b/g, (whole, i: string) => {
      const other = rows[Number(i)];
      return other ? `line ${other.line}` : whole;
    });
    const column = d.path[2];
    refused.set(index, [
      ...(refused.get(index) ?? []),
      { ...(column !== undefined ? { column: String(column) } : {}), code: d.code, message },
    ]);
  }
  return refused;
}

/** The 400 of an import in mode all with bad rows: the first problems as details. */
function nothingImported(problems: ImportProblem[], badRows: number): ServiceError {
  const first = problems[0] as ImportProblem;
  const rows =
    badRows === 1 ? 'a bad row' : `${badRows}${problems.length >= MAX_REPORTED ? ' or more' : ''} bad rows`;
  return new ServiceError(
    400,
    `Nothing imported: the file has ${rows} (line ${first.line}: ${first.message}). Fix them, or send mode=skip to import the good rows`,
    {
      details: problems.map((p) => ({
        code: p.code,
        path: ['file', p.line, ...(p.column !== undefined ? [p.column] : [])],
        message: p.message,
      })),
    },
  );
}
