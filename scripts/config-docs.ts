// Generates the table of environment variables in docs/configuration.md from config.ts: each
// variable's `.describe()` text, and its default (the schema's own, or its `whenUnset` text), so the
// documentation cannot drift from what the service parses. `node scripts/config-docs.ts` rewrites the
// table between the markers and leaves the rest of the page alone; `--check` only says whether it is
// current (test/config-docs.test.ts does the same).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envSchema } from '../config.ts';

export const CONFIG_DOC_PATH = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
export const REGENERATE_COMMAND = 'node scripts/config-docs.ts';
const START = '<!-- config-docs:start (generated from config.ts by `node scripts/config-docs.ts`) -->';
const END = '<!-- config-docs:end -->';

interface Row {
  name: string;
  shownDefault: string;
  /** What the schema accepts: a number's range, an enum's values, a URL. */
  accepts: string;
  meaning: string;
}

/** One row per variable of config.ts, in the schema's order; throws for a variable left undescribed. */
export function configRows(): Row[] {
  return Object.entries(envSchema.shape).map(([name, schema]) => {
    const meta = z.globalRegistry.get(schema as z.ZodType) ?? {};
    if (typeof meta.description !== 'string' || !meta.description.trim()) {
      throw new Error(`config.ts: ${name} has no .describe() text; every variable is documented`);
    }
    return {
      name,
      shownDefault: shownDefault(schema as z.ZodType, meta),
      accepts: accepts(schema as z.ZodType),
      meaning: meta.description,
    };
  });
}

function shownDefault(schema: z.ZodType, meta: Record<string, unknown>): string {
  if (typeof meta.whenUnset === 'string') return meta.whenUnset;
  // A transformed value (a list read from a comma-separated string) keeps its default on the input side.
  let inner = schema._zod.def as { type: string; in?: z.ZodType; defaultValue?: unknown };
  if (inner.type === 'pipe' && inner.in) inner = inner.in._zod.def as typeof inner;
  if (inner.type !== 'default') return 'unset';
  const value = inner.defaultValue;
  return value === '' ? 'empty' : `\`${String(value)}\``;
}

interface Def {
  type: string;
  in?: z.ZodType;
  innerType?: z.ZodType;
  format?: string;
  entries?: Record<string, string>;
}

/** The base schema under defaults, optionals and transforms (whose input side is what is parsed). */
function base(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const def = current._zod.def as Def;
    const next =
      def.type === 'pipe'
        ? def.in
        : def.type === 'default' || def.type === 'optional'
          ? def.innerType
          : undefined;
    if (!next) return current;
    current = next;
  }
}

const figure = (n: number) => n.toLocaleString('en-US');

function accepts(schema: z.ZodType): string {
  const inner = base(schema);
  const def = inner._zod.def as Def;
  if (def.type === 'enum') {
    // Words first: an object lists integer-like keys before the others, so `0` and `1` would lead.
    const values = Object.values(def.entries ?? {});
    const ordered = [...values.filter((v) => !/^\d+$/.test(v)), ...values.filter((v) => /^\d+$/.test(v))];
    return ordered.map((v) => `\`${v}\``).join(', ');
  }
  if (inner instanceof z.ZodNumber) {
    const whole = inner.isInt ? 'integer' : 'number';
    return `${whole}, ${figure(inner.minValue ?? 0)} to ${figure(inner.maxValue ?? Number.MAX_SAFE_INTEGER)}`;
  }
  if (def.format === 'url') return 'URL';
  if (inner instanceof z.ZodString && (inner.minLength ?? 0) > 1)
    return `text, ${inner.minLength}+ characters`;
  return 'text';
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The Markdown table, its columns padded so that the source reads as a table too. */
export function configTable(): string {
  const rows = configRows().map((r) => [`\`${r.name}\``, r.shownDefault, r.accepts, r.meaning].map(cell));
  const header = ['Variable', 'Default', 'Accepts', 'Meaning'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The page with its generated part replaced by the current table. */
export function renderConfigDoc(page: string): string {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`${CONFIG_DOC_PATH} has lost its markers: ${START} … ${END}`);
  }
  return `${page.slice(0, start)}${START}\n\n${configTable()}\n\n${page.slice(end)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = readFileSync(CONFIG_DOC_PATH, 'utf8');
  const current = renderConfigDoc(page);
  if (process.argv.includes('--check')) {
    if (current !== page) {
      console.error(`docs/configuration.md is out of date: run ${REGENERATE_COMMAND}`);
      process.exitCode = 1;
    }
  } else if (current !== page) {
    writeFileSync(CONFIG_DOC_PATH, current);
    console.log('docs/configuration.md: table regenerated from config.ts');
  } else {
    console.log('docs/configuration.md is current');
  }
}
