// What the CSV import and export tests share: an import sent as a streamed multipart body (its file
// given whole, or as generated chunks so a 100 MB file is never held), and an export read as text.
import type { ApiResponse, TestService } from '../helpers/service.ts';

export interface ImportOptions {
  workspaceId?: string;
  /** The file: text, bytes, or chunks made as they are sent. */
  csv: string | Buffer | (() => Iterable<Buffer>);
  mode?: string;
  name?: string;
  /** Where the text fields go (default: before the file). */
  order?: 'fieldsFirst' | 'fileFirst';
  headers?: Record<string, string>;
  /** Extra parts, raw. */
  extraFields?: [string, string][];
}

/** A multipart body as a stream, pulling the file's chunks as it is read. */
function importBody(o: ImportOptions): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `----csv${Math.random().toString(16).slice(2)}`;
  const field = (name: string, value: string) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  function* fields(): Generator<Buffer> {
    if (o.workspaceId !== undefined) yield field('workspaceId', o.workspaceId);
    if (o.mode !== undefined) yield field('mode', o.mode);
    for (const [k, v] of o.extraFields ?? []) yield field(k, v);
  }
  function* file(): Generator<Buffer> {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${o.name ?? 'rows.csv'}"\r\n` +
        'Content-Type: text/csv\r\n\r\n',
    );
    if (typeof o.csv === 'function') yield* o.csv();
    else yield Buffer.from(o.csv);
    yield Buffer.from('\r\n');
  }
  function* pieces(): Generator<Buffer> {
    if (o.order === 'fileFirst') {
      yield* file();
      yield* fields();
    } else {
      yield* fields();
      yield* file();
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  const it = pieces();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = it.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length));
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POST /api/v1/tables/{id}/rows/import in-process. */
export async function importCsv(
  svc: TestService,
  key: string,
  tableId: string,
  o: ImportOptions,
): Promise<ApiResponse> {
  const { body, contentType } = importBody(o);
  const res = await svc.app.request(
    new Request(`http://api.test/api/v1/tables/${tableId}/rows/import`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': contentType, ...o.headers },
      body,
      duplex: 'half',
    } as RequestInit),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** GET /api/v1/tables/{id}/rows/export in-process: the answer with its body as text. */
export async function exportRows(
  svc: TestService,
  key: string,
  tableId: string,
  query: { workspaceId: string; format?: string; filter?: unknown },
) {
  const url = new URL(`http://api.test/api/v1/tables/${tableId}/rows/export`);
  url.searchParams.set('workspaceId', query.workspaceId);
  if (query.format !== undefined) url.searchParams.set('format', query.format);
  if (query.filter !== undefined) url.searchParams.set('filter', JSON.stringify(query.filter));
  const res = await svc.app.request(url.toString(), { headers: { 'X-API-Key': key } });
  const text = await res.text();
  let body: unknown = null;
  if (!res.ok) body = JSON.parse(text);
  return { status: res.status, headers: res.headers, text, body };
}

/** CSV text with CRLF line ends from lines. */
export const csvOf = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
