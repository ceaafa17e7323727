// The CSV reader and writer of table import and export (api/routes/tables/csv-reader.ts and
// csv-writer.ts) on their own: RFC 4180 records, the line each starts on, malformed records and
// where reading picks up again, limits, encodings; and, for any fields, whatever is written reads
// back the same however the bytes are cut into chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CsvItem, MAX_RECORD_CHARS, readCsv } from '../../api/routes/tables/csv-reader.ts';
import { csvField, csvRecord, defused } from '../../api/routes/tables/csv-writer.ts';
import { ServiceError } from '../../errors.ts';

async function* chunked(bytes: Buffer, cuts: number[] = []): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut <= at || cut >= bytes.length) continue;
    yield bytes.subarray(at, cut);
    at = cut;
  }
  if (at < bytes.length) yield bytes.subarray(at);
}

async function read(text: string | Buffer, cuts?: number[]): Promise<CsvItem[]> {
  const out: CsvItem[] = [];
  for await (const item of readCsv(chunked(Buffer.from(text), cuts))) out.push(item);
  return out;
}

const records = (items: CsvItem[]) =>
  items.map((i) => (i.error === undefined ? [i.line, ...i.fields] : [i.line, i.error]));

describe('reading', () => {
  it('reads fields, quoted fields, doubled quotes and empty fields, with the line each record starts on', async () => {
    const text = 'a,b,c\r\n1,"x,y","say ""hi"""\r\n,,\r\n"multi\r\nline\nfield",2,3\r\n"",x,\r\nlast,1,2';
    expect(records(await read(text))).toEqual([
      [1, 'a', 'b', 'c'],
      [2, '1', 'x,y', 'say "hi"'],
      [3, '', '', ''],
      [4, 'multi\r\nline\nfield', '2', '3'],
      [7, '', 'x', ''],
      [8, 'last', '1', '2'],
    ]);
  });

  it('takes CRLF, LF and CR, mixed; skips blank lines, counting them; drops a BOM', async () => {
    expect(records(await read('\uFEFFa\r\n\r\nb\n\nc\r\rd\n'))).toEqual([
      [1, 'a'],
      [3, 'b'],
      [5, 'c'],
      [7, 'd'],
    ]);
  });

  it('reports a malformed record by the line it starts on and reads on from the next line', async () => {
    const text = 'a,b\r\nx"y,1\r\n"ok",2\r\n"a"b,3\r\n"two\r\nlines"z,4\r\nfine,5\r\n"open,6\r\nrest,7\r\n';
    expect(records(await read(text))).toEqual([
      [1, 'a', 'b'],
      [2, 'A quote inside an unquoted field: quote the whole field, doubling its quotes'],
      [3, 'ok', '2'],
      [4, 'Text after the closing quote of a field'],
      [5, 'Text after the closing quote of a field'],
      [7, 'fine', '5'],
      [8, 'A quoted field is not closed: the file ends inside it'],
    ]);
  });

  it('reads the same records however the bytes are cut, a UTF-8 character or a CRLF split included', async () => {
    // U+FEFF inside the text stays, wherever the cut (Node's decoder dropped it after a split character).
    const text = 'ä,"b\r\nc"\r\nü✓\uFEFF,"q""z"\r\n';
    const whole = await read(text);
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) expect(await read(bytes, [cut])).toEqual(whole);
    expect(
      await read(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ),
    ).toEqual(whole);
  });

  it('refuses text that is not UTF-8, and a record over the size limit, as a whole (400)', async () => {
    const latin1 = Buffer.from('name\r\ncaf\xe9\r\n', 'latin1');
    await expect(read(latin1)).rejects.toThrow(/not UTF-8/);
    await expect(read(Buffer.from([0x61, 0xe2, 0x82]))).rejects.toBeInstanceOf(ServiceError);
    const long = `a\r\n"${'x'.repeat(MAX_RECORD_CHARS + 1)}`;
    await expect(read(long, [70_000, 140_000])).rejects.toThrow(/Line 2: a record over/);
    // Just under the limit is read.
    const [, big] = await read(`a\r\n${'y'.repeat(MAX_RECORD_CHARS - 10)}\r\n`);
    expect(big?.fields?.[0]).toHaveLength(MAX_RECORD_CHARS - 10);
  });
});

describe('writing', () => {
  it('quotes a field only when it must, and a record of one empty field', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField(' lead')).toBe('" lead"');
    expect(csvField('')).toBe('');
    expect(csvRecord(['a', '', 'b'])).toBe('a,,b\r\n');
    expect(csvRecord([''])).toBe('""\r\n');
  });

  it('defuses text a spreadsheet would run as a formula', () => {
    for (const t of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(defused(t)).toBe(`'${t}`);
    for (const t of ['1', 'a=b', " '=x", '']) expect(defused(t)).toBe(t);
  });
});

describe('written, then read', () => {
  // Any text a cell may hold: separators, quotes, line breaks, spaces, BMP and astral characters.
  const cell = fc.string({
    unit: fc.oneof(
      fc.constantFrom(',', '"', '\r', '\n', ' ', 'a', 'Z', '0', 'é', '✓', '😀', '\uFEFF'),
      fc.string({ maxLength: 1 }),
    ),
    maxLength: 12,
  });
  const table = fc
    .integer({ min: 1, max: 5 })
    .chain((width) =>
      fc.array(fc.array(cell, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 12 }),
    );

  it('reads back every record, field for field, on the line it was written at, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.array(fc.nat(), { maxLength: 6 }), async (rows, cuts) => {
        const text = rows.map(csvRecord).join('');
        const bytes = Buffer.from(text);
        const items = await read(
          bytes,
          cuts.map((c) => c % (bytes.length + 1)),
        );
        // Each record starts after the line breaks of those before it (CRLF is one).
        let line = 1;
        const expected = rows.map((fields) => {
          const at = line;
          line += (csvRecord(fields).match(/\r\n|\r|\n/g) ?? []).length;
          return { line: at, fields };
        });
        // A leading BOM of the first field is dropped as the file's (a writer that wants it kept quotes it).
        if (text.startsWith('\uFEFF')) return;
        expect(items).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
