// The body of an export: the scanned rows written as CSV or JSONL, a page at a time as the client
// reads (the stream pulls the next page only when the last one has been taken), so memory holds one
// page however large the table.
import { cellText } from '../../../db/tables/cell-text.ts';
import type { RowScan } from '../../../db/tables/row-scan.ts';
import type { ColumnDef } from '../../../db/tables/values.ts';
import type { Logger } from '../../../logger.ts';
import { csvRecord, defused } from './csv-writer.ts';

export type ExportFormat = 'csv' | 'jsonl';

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

// Columns whose cells hold text a person wrote, which a spreadsheet could take for a formula;
// numbers, booleans, dates and JSON text never start like one that runs.
const NOT_TEXT = new Set(['number', 'boolean', 'date', 'json']);

/** One row as a CSV record, its cells in column order. */
function csvRow(columns: readonly ColumnDef[], data: Record<string, unknown>): string {
  return csvRecord(
    columns.map((c) => {
      const text = cellText(c, data[c.name]);
      return NOT_TEXT.has(c.type) ? text : defused(text);
    }),
  );
}

/** One row as a JSON line, its keys in column order (the stored object's are in jsonb's). */
function jsonLine(columns: readonly ColumnDef[], data: Record<string, unknown>): string {
  const ordered: Record<string, unknown> = {};
  for (const c of columns) if (Object.hasOwn(data, c.name)) ordered[c.name] = data[c.name];
  return `${JSON.stringify(ordered)}\n`;
}

/** How an export ended: the rows written out, and whether they were all the scan selected. */
export interface ExportEnd {
  rowCount: number;
  complete: boolean;
}

/**
 * The export's bytes. A failure after the answer has started can only cut it short: it is logged.
 * `onEnd` is called once, when the stream ends (its last row written, the client gone, or a page
 * failed), and awaited before the stream closes, so a client that has read the whole export finds
 * its audit entry; its own failure is logged.
 */
export function exportBody(
  scan: RowScan,
  format: ExportFormat,
  log: Logger,
  onEnd: (end: ExportEnd) => Promise<void> = async () => {},
): ReadableStream<Uint8Array> {
  const columns = scan.table.schema.columns;
  const encoder = new TextEncoder();
  const pages = scan.pages();
  let started = false;
  let rowCount = 0;
  let ended = false;
  const end = async (complete: boolean) => {
    if (ended) return;
    ended = true;
    await onEnd({ rowCount, complete }).catch((err: unknown) => {
      log.error('could not record the end of an export', { tableId: scan.table.id, err });
    });
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && format === 'csv') {
        started = true;
        controller.enqueue(encoder.encode(csvRecord(columns.map((c) => c.name))));
        return;
      }
      started = true;
      try {
        const next = await pages.next();
        if (next.done) {
          await end(true);
          return controller.close();
        }
        const write = format === 'csv' ? csvRow : jsonLine;
        controller.enqueue(encoder.encode(next.value.map((data) => write(columns, data)).join('')));
        rowCount += next.value.length;
      } catch (err) {
        log.error('an export stopped before its end', { tableId: scan.table.id, err });
        await end(false);
        controller.error(err);
      }
    },
    async cancel() {
      await pages.return(undefined);
      await end(false);
    },
  });
}
