// Writes CSV records (RFC 4180): fields joined by commas, records ended by CRLF, a field quoted when
// it holds a comma, a quote (doubled inside) or a line break, or when it begins or ends with a space
// (which some readers trim). Text cells that a spreadsheet would run as a formula are defused.

// What Excel, LibreOffice and Google Sheets take for the start of a formula (OWASP's list). A
// table's text often comes from outside (forms, webhooks, model output), and a CSV export is made to
// be opened in a spreadsheet: such a cell gets a leading apostrophe, which the spreadsheet shows as
// text. The value read back by an import keeps that apostrophe: JSONL is the lossless export.
const FORMULA_START = /^[=+\-@\t\r]/;

const NEEDS_QUOTES = /[",\r\n]|^ | $/;

/** One field, quoted when it must be. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A text cell as a spreadsheet will only ever show it (see FORMULA_START). */
export const defused = (text: string) => (FORMULA_START.test(text) ? `'${text}` : text);

/** One record, with its CRLF. A record of one empty field is `""`: an empty line is no record. */
export function csvRecord(fields: readonly string[]): string {
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  return `${fields.map(csvField).join(',')}\r\n`;
}
