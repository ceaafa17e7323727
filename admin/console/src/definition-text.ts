// A pasted workflow definition, JSON or YAML (JSON is YAML too, so one parser reads both and knows
// where every value sits): its value, its syntax errors with their lines, and the line a path names,
// so the service's validation issues ({path: ['definition', 'blocks', 1, 'type']}) point into the text.
import { isNode, LineCounter, parseDocument } from 'yaml';

export interface TextIssue {
  path: (string | number)[];
  message: string;
  /** 1-based, when the issue could be placed in the text. */
  line?: number;
  col?: number;
}

export interface ParsedDefinition {
  format: 'json' | 'yaml';
  /** Present when the text parsed. */
  value?: unknown;
  syntaxErrors: TextIssue[];
  /** Where a path's value (or, when it is missing, its nearest parent) starts. */
  locate(path: (string | number)[]): { line: number; col: number } | null;
}

export function parseDefinitionText(text: string): ParsedDefinition {
  const format = /^\s*[{[]/.test(text) ? 'json' : 'yaml';
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntaxErrors = doc.errors.map((e) => {
    const { line, col } = lines.linePos(e.pos[0]);
    // The parser's message ends with a code excerpt that the editor already shows.
    return { path: [], message: e.message.split('\n')[0] ?? e.message, line, col };
  });
  if (!syntaxErrors.length && (doc.contents === null || text.trim() === ''))
    syntaxErrors.push({ path: [], message: 'Paste a workflow definition (JSON or YAML)', line: 1, col: 1 });
  const locate = (path: (string | number)[]) => {
    const inText = path[0] === 'definition' ? path.slice(1) : path;
    for (let n = inText.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(inText.slice(0, n), true);
      if (isNode(node) && node.range) return lines.linePos(node.range[0]);
    }
    return null;
  };
  return {
    format,
    syntaxErrors,
    ...(syntaxErrors.length ? {} : { value: doc.toJS() as unknown }),
    locate,
  };
}

/** The service's issues, each placed at its line when its path is in the definition. */
export function placeIssues(
  parsed: ParsedDefinition,
  issues: { path: (string | number)[]; message: string }[],
): TextIssue[] {
  return issues
    .map((i): TextIssue => {
      const at = i.path[0] === 'definition' ? parsed.locate(i.path) : null;
      return at ? { ...i, line: at.line, col: at.col } : i;
    })
    .sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
}

const FIRST_KEYS: Record<string, string[]> = {
  definition: ['inputs', 'blocks', 'edges', 'timeoutMs'],
  block: ['id', 'type'],
  edge: ['from', 'to', 'branch'],
};

function ordered(value: Record<string, unknown>, first: string[]) {
  const keys = [...first.filter((k) => k in value), ...Object.keys(value).filter((k) => !first.includes(k))];
  return Object.fromEntries(keys.map((k) => [k, value[k]]));
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A stored definition as a person writes one: inputs, blocks, edges; each block's id and type first,
 * each edge from, to, branch (the database keeps JSON keys in its own order). Loop and parallel
 * bodies likewise.
 */
export function presentDefinition(def: unknown): unknown {
  if (!isObject(def)) return def;
  const graph = (g: Record<string, unknown>, first: string[]) => {
    const out = ordered(g, first);
    if (Array.isArray(out.blocks))
      out.blocks = out.blocks.map((b) => (isObject(b) ? graph(b, FIRST_KEYS.block as string[]) : b));
    if (Array.isArray(out.edges))
      out.edges = out.edges.map((e) => (isObject(e) ? ordered(e, FIRST_KEYS.edge as string[]) : e));
    return out;
  };
  return graph(def, FIRST_KEYS.definition as string[]);
}
