// CSV: one paragraph per record, one `column: value` line per non-empty cell, so that any chunk of it
// still says what each value is. The first record names the columns; the delimiter is the most
// frequent of , ; tab | on the first line.
import { parse } from 'csv-parse/sync';
import { DocumentParseError, reasonOf } from './errors.ts';
import { decodeText } from './text.ts';

const DELIMITERS = [',', ';', '\t', '|'];

export function parseCsv(bytes: Uint8Array): string {
  const text = decodeText(bytes);
  let records: string[][];
  try {
    records = parse(text, {
      delimiter: sniffDelimiter(text),
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    }) as string[][];
  } catch (error) {
    throw new DocumentParseError(`The CSV could not be read: ${reasonOf(error)}`);
  }
  const [header = [], ...rows] = records;
  const names = header.map((name, i) => name || `Column ${i + 1}`);
  if (rows.length === 0) return names.join('\n');
  const out: string[] = [];
  for (const row of rows) {
    const lines: string[] = [];
    row.forEach((value, i) => {
      if (value !== '') lines.push(`${names[i] ?? `Column ${i + 1}`}: ${value}`);
    });
    if (lines.length > 0) out.push(lines.join('\n'));
  }
  return out.join('\n\n');
}

function sniffDelimiter(text: string): string {
  const newline = text.indexOf('\n');
  const first = (newline < 0 ? text : text.slice(0, newline)).replace(/"[^"]*"/g, '');
  let best = ',';
  let most = 0;
  for (const delimiter of DELIMITERS) {
    const count = first.split(delimiter).length - 1;
    if (count > most) {
      best = delimiter;
      most = count;
    }
  }
  return best;
}
