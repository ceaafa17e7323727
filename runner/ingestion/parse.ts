// Turns an uploaded document into plain text for chunking, per kind (runner/ingestion/parsers/). Each
// parser is imported on first use, so a worker that only ever sees text never loads PDF.js. Whatever
// fails comes out as a DocumentParseError whose message is the reason shown on the failed document.
import type { DocumentKind } from './document-types.ts';
import { DocumentParseError, reasonOf } from './parsers/errors.ts';

export { DocumentParseError } from './parsers/errors.ts';

const LABELS: Record<DocumentKind, string> = {
  txt: 'text file',
  md: 'Markdown file',
  csv: 'CSV',
  json: 'JSON',
  html: 'HTML',
  pdf: 'PDF',
  docx: 'Word document',
};

/** The document's text; for a PDF, `bytes`' buffer is detached afterwards. */
export async function parseDocument(bytes: Uint8Array, kind: DocumentKind): Promise<string> {
  if (bytes.byteLength === 0) throw new DocumentParseError('The document is empty');
  let text: string;
  try {
    text = await extract(bytes, kind);
  } catch (error) {
    if (error instanceof DocumentParseError) throw error;
    throw new DocumentParseError(`The ${LABELS[kind] ?? 'document'} could not be read: ${reasonOf(error)}`);
  }
  const clean = normalize(text);
  if (clean.trim() === '') throw new DocumentParseError('The document has no text');
  return clean;
}

async function extract(bytes: Uint8Array, kind: DocumentKind): Promise<string> {
  switch (kind) {
    case 'txt':
    case 'md':
      return (await import('./parsers/text.ts')).decodeText(bytes);
    case 'csv':
      return (await import('./parsers/csv.ts')).parseCsv(bytes);
    case 'json':
      return (await import('./parsers/json.ts')).parseJson(bytes);
    case 'html':
      return (await import('./parsers/html.ts')).parseHtml(bytes);
    case 'pdf':
      return (await import('./parsers/pdf.ts')).parsePdf(bytes);
    case 'docx':
      return (await import('./parsers/docx.ts')).parseDocx(bytes);
    default:
      throw new DocumentParseError(`Unsupported document kind: ${String(kind)}`);
  }
}

// Line ends become \n; NUL and the other control characters go (Postgres text cannot hold NUL), a form
// feed (PDF page breaks) becomes a paragraph break; lone surrogates become U+FFFD.
function normalize(text: string): string {
  return (
    text
      .replace(/\r\n?/g, '\n')
      .replace(/\f/g, '\n\n')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
      .replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g, '')
      .toWellFormed()
  );
}
