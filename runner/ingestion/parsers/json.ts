// JSON: one `path: value` line per scalar (`orders[2].customer.name: Ada`), so that any chunk of it still
// says where each value sits; elements of a top-level array or object that are themselves containers are
// set apart by a blank line, which the chunker treats as a paragraph break.
import { DocumentParseError, reasonOf } from './errors.ts';
import { decodeText } from './text.ts';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const BREAK = Symbol('paragraph break');

export function parseJson(bytes: Uint8Array): string {
  let value: unknown;
  try {
    value = JSON.parse(decodeText(bytes));
  } catch (error) {
    if (error instanceof DocumentParseError) throw error;
    throw new DocumentParseError(`The JSON could not be read: ${reasonOf(error)}`);
  }
  return render(value);
}

/** Walks with an explicit stack: a deeply nested document must not overflow the call stack. */
function render(root: unknown): string {
  const lines: string[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (value === BREAK) {
      lines.push('');
      continue;
    }
    if (value !== null && typeof value === 'object') {
      const entries = Array.isArray(value)
        ? value.map((item, i): [string, unknown] => [`${path}[${i}]`, item])
        : Object.entries(value).map(([key, item]): [string, unknown] => [join(path, key), item]);
      if (entries.length === 0) {
        // An empty document stays empty (and is refused as having no text).
        if (path) lines.push(`${path}: ${Array.isArray(value) ? '[]' : '{}'}`);
        continue;
      }
      // Pushed in reverse, to be popped in order.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [childPath, item] = entries[i] as [string, unknown];
        stack.push({ value: item, path: childPath, depth: depth + 1 });
        if (depth === 0 && i > 0 && item !== null && typeof item === 'object') {
          stack.push({ value: BREAK, path: '', depth });
        }
      }
      continue;
    }
    const text = typeof value === 'string' ? value : String(value);
    lines.push(path ? `${path}: ${text}` : text);
  }
  return lines.join('\n');
}

function join(path: string, key: string): string {
  if (IDENTIFIER.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}
