// The kinds of document a knowledge base ingests, and how an upload's kind is recognised: by its file
// name's extension first (clients often send a generic media type), else by its media type. Imported by
// the API to refuse an unsupported upload up front (415), so it must stay free of any parser import.

export const DOCUMENT_KINDS = ['txt', 'md', 'csv', 'json', 'html', 'pdf', 'docx'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** What a 415 answer lists. */
export const SUPPORTED_DOCUMENT_TYPES =
  'plain text (.txt), Markdown (.md), CSV (.csv), JSON (.json), HTML (.html), PDF (.pdf), Word (.docx)';

// Maps, not object literals: a name like "x.constructor" must not find Object.prototype's members.
const BY_EXTENSION: ReadonlyMap<string, DocumentKind> = new Map([
  ['txt', 'txt'],
  ['text', 'txt'],
  ['md', 'md'],
  ['markdown', 'md'],
  ['csv', 'csv'],
  ['json', 'json'],
  ['html', 'html'],
  ['htm', 'html'],
  ['pdf', 'pdf'],
  ['docx', 'docx'],
]);

const BY_MEDIA_TYPE: ReadonlyMap<string, DocumentKind> = new Map([
  ['text/plain', 'txt'],
  ['text/markdown', 'md'],
  ['text/x-markdown', 'md'],
  ['text/csv', 'csv'],
  ['application/csv', 'csv'],
  ['application/json', 'json'],
  ['text/json', 'json'],
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['application/pdf', 'pdf'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
]);

/** The kind of an upload, or null when it is none this service can read. */
export function documentKindOf(filename: string, mimeType: string): DocumentKind | null {
  const dot = filename.lastIndexOf('.');
  const byName = dot >= 0 ? BY_EXTENSION.get(filename.slice(dot + 1).toLowerCase()) : undefined;
  if (byName) return byName;
  const essence = mimeType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return BY_MEDIA_TYPE.get(essence) ?? null;
}

const MEDIA_TYPE_OF_KIND: Readonly<Record<DocumentKind, string>> = {
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/**
 * The media type to record for an upload: the one it came with, unless that says nothing more than
 * `application/octet-stream` (what curl and many clients send for an unknown extension), in which
 * case its kind's own.
 */
export function documentMediaType(kind: DocumentKind, mimeType: string): string {
  return mimeType === 'application/octet-stream' ? MEDIA_TYPE_OF_KIND[kind] : mimeType;
}

export function isDocumentKind(value: unknown): value is DocumentKind {
  return typeof value === 'string' && (DOCUMENT_KINDS as readonly string[]).includes(value);
}
