// The CLI's help: every procedure of the admin router with the one line its `.meta({description})`
// gives, and for one procedure the input it takes, read from its zod schema (as JSON Schema), so
// the help cannot drift from what the admin plane accepts.
import { z } from 'zod';
import { adminRouter } from './router.ts';
import type { AdminMeta } from './trpc.ts';

export type ProcedureType = 'query' | 'mutation';

export interface ProcedureInfo {
  type: ProcedureType;
  description: string;
  /** The zod schemas the procedure parses its input with (none: it takes no input). */
  inputs: z.ZodType[];
}

export function procedures(): Map<string, ProcedureInfo> {
  const defs = adminRouter._def.procedures as unknown as Record<
    string,
    { _def: { type: ProcedureType; meta?: AdminMeta; inputs: z.ZodType[] } }
  >;
  return new Map(
    Object.entries(defs).map(([path, p]) => [
      path,
      { type: p._def.type, description: p._def.meta?.description ?? '', inputs: p._def.inputs },
    ]),
  );
}

export const USAGE = `usage: npm run admin -- <router.procedure> ['<json input>']   call the admin plane, print the answer as JSON
       npm run admin -- deploy <workflow.json|yaml> <workspaceId> [name]   create or update, then deploy
       npm run admin -- keys.create '<json input>' --scopes a,b   a key limited to scopes (docs/api.md lists them)
       npm run admin -- help [<router.procedure>]   this list, or the input one procedure takes
       npm run admin                                 serve the admin plane
environment: ADMIN_TOKEN (required), ADMIN_PORT (default 3001) or ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT/trpc)`;

/** The usage, then each procedure with its description, aligned. */
export function listing(all: Map<string, ProcedureInfo>): string {
  const width = Math.max(...[...all.keys()].map((p) => p.length));
  const lines = [...all].map(([path, p]) => `  ${path.padEnd(width)}  ${p.description}`);
  return `${USAGE}\n\nprocedures (npm run admin -- help <procedure> shows its input):\n${lines.join('\n')}`;
}

type Schema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  default?: unknown;
  description?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
};

const FORMATS: Record<string, string> = {
  uuid: 'uuid',
  email: 'email',
  'date-time': 'ISO 8601 date-time',
  uri: 'URL',
};

function range(min: number | undefined, max: number | undefined, unit = ''): string {
  // Bounds that only restate the type (a safe integer's) say nothing to a reader.
  const big = (n: number | undefined) => n !== undefined && Math.abs(n) >= Number.MAX_SAFE_INTEGER;
  const lo = big(min) ? undefined : min;
  const hi = big(max) ? undefined : max;
  if (lo !== undefined && hi !== undefined) return ` ${lo} to ${hi}${unit}`;
  if (lo !== undefined) return ` at least ${lo}${unit}`;
  if (hi !== undefined) return ` at most ${hi}${unit}`;
  return '';
}

/** A one-line name of a schema's type: `uuid`, `string 1 to 100 characters`, `"a" | "b"`, … */
export function typeName(s: Schema): string {
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return variants.map(typeName).join(' or ');
  const type = Array.isArray(s.type) ? s.type.join(' or ') : s.type;
  switch (type) {
    case undefined:
      return 'any JSON';
    case 'string':
      return s.format && FORMATS[s.format]
        ? (FORMATS[s.format] as string)
        : `string${range(s.minLength, s.maxLength, ' characters')}`;
    case 'integer':
    case 'number':
      return `${type}${range(s.minimum, s.maximum)}`;
    case 'array':
      return `array of ${s.items ? typeName(s.items) : 'any JSON'}${range(s.minItems, s.maxItems, ' items')}`;
    case 'object':
      if (s.properties) return 'object';
      return typeof s.additionalProperties === 'object'
        ? `object of ${typeName(s.additionalProperties)} by name`
        : 'object';
    default:
      return type;
  }
}

/** The object schema among a field's variants (`{…} or null`), whose fields are worth listing. */
function objectOf(s: Schema): Schema | undefined {
  if (s.properties) return s;
  return (s.anyOf ?? s.oneOf)?.find((v) => v.properties);
}

function fieldLines(s: Schema, indent: string): string[] {
  const lines: string[] = [];
  const required = new Set(s.required ?? []);
  for (const [name, field] of Object.entries(s.properties ?? {})) {
    const notes = [required.has(name) ? 'required' : 'optional'];
    if (field.default !== undefined) notes.push(`default ${JSON.stringify(field.default)}`);
    const description = field.description ? `  ${field.description}` : '';
    lines.push(`${indent}${name}: ${typeName(field)}  (${notes.join(', ')})${description}`);
    const nested = objectOf(field);
    if (nested) lines.push(...fieldLines(nested, `${indent}  `));
  }
  return lines;
}

/** A value to show for a required field in the example command line. */
function exampleValue(s: Schema): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'integer' || type === 'number') return s.minimum ?? 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return example(s);
  return type === undefined ? {} : '…';
}

function example(s: Schema): Record<string, unknown> {
  return Object.fromEntries((s.required ?? []).map((k) => [k, exampleValue(s.properties?.[k] ?? {})]));
}

/** What `help <procedure>` prints: its kind and description, its input field by field, an example. */
export function procedureHelp(path: string, p: ProcedureInfo): string {
  const out = [`${path} (${p.type}): ${p.description}`, ''];
  const [input] = p.inputs;
  if (!input) {
    out.push('Input: none.', '', `Example: npm run admin -- ${path}`);
    return out.join('\n');
  }
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Schema;
  const optional = input.safeParse(undefined).success;
  const variants = schema.oneOf ?? schema.anyOf;
  const shapes = schema.properties ? [schema] : (variants ?? []).filter((v) => v.properties);
  if (shapes.length === 0) {
    out.push(`Input: ${typeName(schema)}`);
  } else if (shapes.length === 1) {
    out.push(`Input: a JSON object${optional ? ' (the input may be left out)' : ''}`);
    out.push(...fieldLines(shapes[0] as Schema, '  '));
  } else {
    out.push(`Input: a JSON object, one of ${shapes.length} shapes${optional ? ' (or left out)' : ''}`);
    shapes.forEach((shape, i) => {
      out.push(`  shape ${i + 1}:`, ...fieldLines(shape, '    '));
    });
  }
  const first = shapes[0];
  const args = first ? ` '${JSON.stringify(example(first))}'` : '';
  const nothingRequired = (first?.required ?? []).length === 0;
  out.push('', `Example: npm run admin -- ${path}${optional && nothingRequired ? '' : args}`);
  return out.join('\n');
}
