// /api/v1/tables/{tableId}/rows/import and …/rows/export: a table's rows in from a CSV file, and out
// as CSV or JSONL. Mounted before the row routes, whose GET …/rows/{rowId} would otherwise take
// `export` for a row id.
//
// An import's file is first streamed to storage (as a file upload is: fields before or after it,
// capped at 100 MB, never held in memory), then read back and imported in one transaction, and
// removed; one that a dying process leaves behind is swept (./import-spools.ts). Importing while
// the upload arrives would hold the table's write lock (and, embedded, the whole database) for as
// long as the client takes to send the file.
import { createRoute } from '@hono/zod-openapi';
import type { Handler } from 'hono';
import type { Principal } from '../../../db/api-keys.ts';
import { checkFileName, MAX_FILE_BYTES } from '../../../db/files.ts';
import { scanRows } from '../../../db/tables/row-scan.ts';
import { getTable } from '../../../db/tables/tables.ts';
import { recordExport, recordImport } from '../../../db/tables/transfer-audit.ts';
import type { StorageDriver } from '../../../storage/driver.ts';
import { receiveUpload } from '../../../storage/multipart-upload.ts';
import type { ApiDeps, ApiEnv } from '../../context.ts';
import { uploadFields, uuidFromPath } from '../../middleware/validate.ts';
import { API_RATE_LIMITED, idempotencyHeaders, ok, okMedia, WRITE_DENIED } from '../../openapi/components.ts';
import { errors, withIdempotency } from '../../openapi/error-answers.ts';
import { contentDisposition } from '../content-disposition.ts';
import { type Guards, Router } from '../router.ts';
import { readErrors } from './examples.ts';
import { spooledStorage } from './import-spools.ts';
import { reachTable, tags } from './routes.ts';
import { EXPORT_MEDIA_TYPES, type ExportEnd, exportBody } from './row-export.ts';
import { importRows } from './row-import.ts';
import { tablePath } from './schemas.ts';
import {
  csvExample,
  exportHeaders,
  exportInvalid,
  importInvalid,
  importTooLarge,
  jsonlExample,
  rowsImportedExample,
} from './transfer-examples.ts';
import { exportedRows, exportQuery, importFields, importForm, rowsImported } from './transfer-schemas.ts';

type TransferDeps = ApiDeps & { storage: StorageDriver };

// A plain route (Router.plain): the handler streams the form itself, so the Router validates none
// of it; the body is documented for clients.
export const importRowsRoute = createRoute({
  method: 'post',
  path: '/api/v1/tables/{tableId}/rows/import',
  operationId: 'importRows',
  scope: 'tables:write' as const,
  tags,
  summary: 'Import rows from CSV',
  description:
    'Inserts the rows of a CSV file (multipart fields `workspaceId`, `file`, `mode`). The header row names the ' +
    'columns: a name the table does not have, or a required column left out, is a 400 and nothing is read further. ' +
    'Each cell is read by its column type: number (decimal, `1.5e3`), boolean (`true`/`false`, any case), date ' +
    '(ISO 8601), json (JSON text), string (as is); an empty cell is no value. A row is bad when it does not parse, ' +
    'has another number of fields than the header, holds a value its column does not take, lacks a required value, ' +
    "repeats a unique value (of the table or of an earlier line), or would pass the table's row cap. " +
    '`mode=all` (the default) imports all rows or none: bad rows are a 400 whose `details` name the first ones ' +
    '(path `["file", line, column]`); `mode=skip` imports the good rows and answers the bad ones in `problems`. ' +
    'The import is one transaction: whatever the answer, the rows it reports are all there, and a failure keeps none. ' +
    'Audited as `table.rows_imported` (file name, mode, counts).',
  request: {
    params: tablePath,
    headers: idempotencyHeaders,
    body: { required: true, content: { 'multipart/form-data': { schema: importForm } } },
  },
  responses: {
    200: ok(
      {
        description: 'The rows imported, and those skipped',
        schema: rowsImported,
        example: rowsImportedExample,
      },
      'api',
      { idempotent: true },
    ),
    ...errors(
      withIdempotency({
        400: importInvalid,
        403: WRITE_DENIED,
        404: ['Table not found', 'Workspace not found'],
        413: importTooLarge,
        429: API_RATE_LIMITED,
      }),
      { metering: 'api', retryAfter: [409] },
    ),
  },
});

export const exportRowsRoute = createRoute({
  method: 'get',
  path: '/api/v1/tables/{tableId}/rows/export',
  operationId: 'exportRows',
  scope: 'tables:read' as const,
  tags,
  summary: 'Export rows as CSV or JSONL',
  description:
    'Streams every row the filter selects (all by default), in position order, as a download named after the ' +
    'table. CSV (UTF-8, RFC 4180, CRLF): a header row of the column names, then one record per row, cells written ' +
    'as an import reads them (dates as ISO 8601 instants, json as JSON text, no value as an empty cell); a text ' +
    "cell starting with `=`, `+`, `-`, `@`, tab or CR gets a leading `'` so a spreadsheet shows it rather than " +
    'running it as a formula. JSONL: one JSON object of column → value per row, exactly as stored. Rows written ' +
    'while the export runs may or may not be in it; every other row is, once. Audited as `table.rows_exported` when ' +
    'the stream ends (format, filter, rows written, whether all were).',
  request: { params: tablePath, query: exportQuery },
  responses: {
    200: {
      ...okMedia(
        'text/csv',
        { description: 'The rows, as the format asked for', schema: exportedRows, example: csvExample },
        'api',
        { headers: exportHeaders },
      ),
      content: {
        'text/csv': { schema: exportedRows, example: csvExample },
        'application/x-ndjson': { schema: exportedRows, example: jsonlExample },
      },
    },
    ...readErrors({ 400: exportInvalid }),
  },
});

/** The import's fields, judged as the stream reaches them: a 400 names the first bad one. */
/** The table an import writes to: the caller needs write permission, and the table must be there. */
async function reachForWrite(deps: TransferDeps, principal: Principal, tableId: string, workspaceId: string) {
  const reached = await reachTable(deps.db, principal, tableId, workspaceId, 'write');
  await getTable(deps.db, reached.ref);
  return reached;
}

function importHandler(deps: TransferDeps): Handler<ApiEnv> {
  const { db, log } = deps;
  // The file is recorded while it is stored, so one left by a process that died is swept.
  const storage = spooledStorage(db, deps.storage, log);
  return async (c) => {
    // The Router validates no part of a plain route: the path parameter is checked here, first.
    const tableId = uuidFromPath(c, 'tableId');
    const principal = c.get('principal');
    let reached: Awaited<ReturnType<typeof reachForWrite>> | undefined;
    const upload = await receiveUpload(c.req.raw.body, c.req.header('content-type'), {
      storage,
      maxBytes: MAX_FILE_BYTES,
      fileField: 'file',
      // Refused before a byte is stored when the workspace field comes first.
      async onFile(fields, name) {
        checkFileName(name);
        if (fields.workspaceId === undefined) return null;
        reached = await reachForWrite(
          deps,
          principal,
          tableId,
          uploadFields(importFields, fields).workspaceId,
        );
        return reached.ref.workspaceId;
      },
    });
    try {
      const { workspaceId, mode } = uploadFields(importFields, upload.fields);
      reached ??= await reachForWrite(deps, principal, tableId, workspaceId);
      const { access, ref } = reached;
      const { body } = await storage.get(upload.file.key);
      const result = await importRows(db, ref, body, mode, (tx, table, done) =>
        recordImport(
          tx,
          access.actor,
          { ...table, organizationId: access.workspace.organization_id },
          {
            fileName: upload.file.name,
            mode,
            insertedCount: done.insertedCount,
            skippedCount: done.skippedCount,
          },
        ),
      );
      const skipped = result.skippedCount ? `, ${result.skippedCount} skipped` : '';
      return c.json({
        success: true as const,
        data: {
          tableId: ref.id,
          mode,
          ...result,
          sourceFile: upload.file.name,
          message: `${result.insertedCount} rows imported${skipped}`,
        },
      });
    } finally {
      // The stored copy was only the way in: whatever the answer, it goes.
      await storage.delete(upload.file.key).catch((cause: unknown) => {
        log.error('could not delete the stored copy of an imported file', {
          key: upload.file.key,
          err: cause,
        });
      });
    }
  };
}

export function tableTransferRoutes(deps: TransferDeps, guards: Guards) {
  const { db, log } = deps;
  return new Router(guards, { rateLimited: true })
    .plain(importRowsRoute, importHandler(deps))
    .openapi(exportRowsRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const q = c.req.valid('query');
      const { access, ref } = await reachTable(db, c.get('principal'), tableId, q.workspaceId, 'read');
      // The table is found and the filter checked before the answer starts: their errors are 4xx.
      const scan = await scanRows(db, ref, q.filter);
      const audited = { ...scan.table, organizationId: access.workspace.organization_id };
      const recorded = (end: ExportEnd) =>
        recordExport(db, access.actor, audited, { format: q.format, filter: q.filter, ...end });
      return c.body(exportBody(scan, q.format, log, recorded), 200, {
        'Content-Type': EXPORT_MEDIA_TYPES[q.format],
        'Content-Disposition': contentDisposition(`${scan.table.name}.${q.format}`),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
    }).app;
}
