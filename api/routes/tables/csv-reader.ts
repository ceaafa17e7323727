// Reads CSV (RFC 4180) as it streams: UTF-8 bytes in, records out, each with the line it starts on,
// so a report can name the line of a bad row. Fields are separated by commas; a field may be quoted
// ("…"), and then holds commas, line breaks and doubled quotes (""). Lines end with CRLF, LF or CR,
// mixed as they come; a BOM is dropped; blank lines are no records.
//
// A malformed record (a quote inside an unquoted field, text after a closing quote, a quoted field
// never closed) is one bad record, reported with its line; reading goes on at the next line, so the
// rows after it are read as they are. Memory holds one record: a record longer than
// MAX_RECORD_CHARS (a quote left open swallows the rest of the file) stops the reading.
//
// (csv-parse, which the runner uses on whole documents, misnumbers the lines of records whose
// quoted fields hold CRLF, and after a malformed quote folds the rows that follow into the error:
// a per-line report needs better.)
import { ServiceError } from '../../../errors.ts';

/** The longest record read, in characters: well above any sensible row, far below the file cap. */
export const MAX_RECORD_CHARS = 1024 * 1024;

export type CsvItem =
  | { line: number; fields: string[]; error?: undefined }
  | { line: number; error: string; fields?: undefined };

const COMMA = 44;
const QUOTE = 34;
const CR = 13;
const LF = 10;

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** A quote inside a quoted field: the closing one, or the first of a doubled pair. */
const QUOTE_SEEN = 3;
/** Passing over the rest of a malformed record's line. */
const SKIPPING = 4;

/** The state of one reading: fed text chunk by chunk, it answers the records each chunk completes. */
export class CsvReader {
  private state = FIELD_START;
  private fields: string[] = [];
  /** The current field's text carried over from earlier chunks (and un-doubled quotes). */
  private field = '';
  private recordChars = 0;
  /** The line the cursor is on, and the line the current record started on. */
  private line = 1;
  private recordLine = 1;
  /** The last character ended a record with CR: an LF right after it is the same line break. */
  private afterCR = false;
  /** Inside a quoted field, the last character was CR (CRLF there is one line break too). */
  private quotedCR = false;

  /** The records (and bad records) the text completes. */
  push(text: string): CsvItem[] {
    const out: CsvItem[] = [];
    let start = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (this.afterCR) {
        this.afterCR = false;
        if (c === LF) continue;
      }
      switch (this.state) {
        case FIELD_START:
          if (c === QUOTE) {
            this.state = QUOTED;
            start = i + 1;
          } else if (c === COMMA) this.addField('');
          else if (c === CR || c === LF) {
            // A line with nothing on it is no record; a record ending in a comma has an empty last field.
            if (this.fields.length) this.addField('');
            this.endRecord(c, out);
          } else {
            this.state = UNQUOTED;
            start = i;
          }
          break;
        case UNQUOTED:
          if (c === COMMA || c === CR || c === LF) {
            this.addField(this.field + text.slice(start, i));
            if (c === COMMA) this.state = FIELD_START;
            else this.endRecord(c, out);
          } else if (c === QUOTE) {
            this.fail(out, 'A quote inside an unquoted field: quote the whole field, doubling its quotes');
          }
          break;
        case QUOTED:
          if (c === QUOTE) {
            this.field += text.slice(start, i);
            this.state = QUOTE_SEEN;
          } else if (c === CR || (c === LF && !this.quotedCR)) this.line++;
          this.quotedCR = c === CR;
          break;
        case QUOTE_SEEN:
          if (c === QUOTE) {
            this.field += '"';
            this.state = QUOTED;
            start = i + 1;
          } else if (c === COMMA || c === CR || c === LF) {
            this.addField(this.field);
            if (c === COMMA) this.state = FIELD_START;
            else this.endRecord(c, out);
          } else this.fail(out, 'Text after the closing quote of a field');
          break;
        case SKIPPING:
          if (c === CR || c === LF) this.endRecord(c, out, false);
          break;
      }
    }
    // The field under way keeps what this chunk holds of it.
    if (this.state === UNQUOTED || this.state === QUOTED) this.field += text.slice(start);
    this.checkLength();
    return out;
  }

  /** The last record, when the text does not end with a line break. */
  end(): CsvItem[] {
    const out: CsvItem[] = [];
    switch (this.state) {
      case FIELD_START:
        if (this.fields.length) {
          this.addField('');
          out.push({ line: this.recordLine, fields: this.fields });
        }
        break;
      case UNQUOTED:
      case QUOTE_SEEN:
        this.addField(this.field);
        out.push({ line: this.recordLine, fields: this.fields });
        break;
      case QUOTED:
        out.push({ line: this.recordLine, error: 'A quoted field is not closed: the file ends inside it' });
        break;
    }
    this.state = FIELD_START;
    this.fields = [];
    this.field = '';
    return out;
  }

  private addField(value: string) {
    this.fields.push(value);
    this.recordChars += value.length + 1;
    this.field = '';
    this.checkLength();
  }

  private checkLength() {
    if (this.recordChars + this.field.length > MAX_RECORD_CHARS) {
      throw new ServiceError(
        400,
        `Line ${this.recordLine}: a record over ${MAX_RECORD_CHARS} characters (is a quote left open?)`,
      );
    }
  }

  /** Ends the record at a line break (emitting it unless it was malformed), moving to the next line. */
  private endRecord(c: number, out: CsvItem[], emit = true) {
    if (emit && this.fields.length) out.push({ line: this.recordLine, fields: this.fields });
    this.fields = [];
    this.field = '';
    this.recordChars = 0;
    this.state = FIELD_START;
    this.line++;
    this.recordLine = this.line;
    this.afterCR = c === CR;
  }

  /** Reports the record as malformed and passes over the rest of its line. */
  private fail(out: CsvItem[], message: string) {
    out.push({ line: this.recordLine, error: message });
    this.state = SKIPPING;
    this.fields = [];
    this.field = '';
    this.recordChars = 0;
  }
}

/**
 * The records of a byte stream of UTF-8 CSV, in order. Text that is not UTF-8 is a 400 (a file in
 * another encoding would otherwise be stored as replacement characters).
 */
export async function* readCsv(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<CsvItem> {
  // fatal: refuses bytes that are not UTF-8. The BOM is dropped here, not by the decoder: Node's
  // drops a U+FEFF inside the text too when the chunk before it ended within a character.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const reader = new CsvReader();
  let atStart = true;
  const decode = (chunk?: Uint8Array) => {
    let text: string;
    try {
      text = chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw new ServiceError(400, 'The file is not UTF-8 text: save it as CSV UTF-8 and send it again');
    }
    if (atStart && text) {
      atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return text;
  };
  for await (const chunk of bytes) yield* reader.push(decode(chunk));
  yield* reader.push(decode());
  yield* reader.end();
}
