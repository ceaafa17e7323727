// The workflow definition format (DESIGN.md, "Workflows") and its validation: the zod shape, each
// block's own schema, and the graph rules (unique ids, edges between existing blocks, no cycles,
// references only to blocks that run before). Every problem names its path.
import { z } from 'zod';
import { type FieldIssue, ServiceError } from '../../errors.ts';
import { APPROVAL_BRANCHES } from '../blocks/approval.ts';
import type { BlockConfig, Edge, Graph } from '../blocks/block.ts';
import { BLOCK_TYPES } from '../blocks/index.ts';
import { checkConcurrencyKey, concurrencySchema } from './concurrency.ts';
import { type InputSpec, inputSpec } from './inputs.ts';
import { findReferences, LOOP_ROOTS } from './references.ts';
import { RETRY_ON_TYPES, retrySchema } from './retry.ts';

const BLOCK_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const RESERVED_IDS = new Set(['start', 'loop', 'parallel', 'inputs', 'blocks', 'error']);

const edgeSchema = z.object({ from: z.string(), to: z.string(), branch: z.string().optional() }).strict();
const blockShape = z.looseObject({
  id: z.string().regex(BLOCK_ID, 'Block ids start with a letter: letters, digits, _ and -, at most 64'),
  type: z.string(),
});

export const definitionSchema = z
  .object({
    inputs: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'Input names are identifiers'), inputSpec)
      .default({}),
    blocks: z.array(blockShape).min(1, 'A workflow needs at least one block').max(500),
    edges: z.array(edgeSchema).max(2000).default([]),
    /** Wall-clock limit of one execution. */
    timeoutMs: z.number().int().min(100).max(3_600_000).optional(),
    /** At most `limit` executions at once (per value of `key`): runner/executor/concurrency.ts. */
    concurrency: concurrencySchema.optional(),
  })
  .strict();

export type { InputSpec };
export type Definition = z.output<typeof definitionSchema> & Graph;

type Path = (string | number)[];

/** Parses and checks a definition; throws a 400 ServiceError whose details name each problem's path. */
export function parseDefinition(raw: unknown, pathPrefix: Path = ['definition']): Definition {
  const parsed = definitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalid(
      parsed.error.issues.map((i) => ({
        code: i.code,
        path: [...pathPrefix, ...(i.path as Path)],
        message: i.message,
      })),
    );
  }
  const def = parsed.data as Definition;
  const issues: FieldIssue[] = [];
  const allIds = new Map<string, Path>();
  checkGraph(def, [...pathPrefix], { outer: new Set(), inLoop: false, allIds, issues });
  if (def.concurrency?.key !== undefined)
    issues.push(...checkConcurrencyKey(def.concurrency.key, [...pathPrefix, 'concurrency']));
  if (issues.length) throw invalid(issues);
  return def;
}

const invalid = (details: FieldIssue[]) => new ServiceError(400, 'Invalid workflow definition', { details });

interface GraphContext {
  /** Blocks of enclosing graphs that have run before this graph starts (referable from inside). */
  outer: Set<string>;
  inLoop: boolean;
  allIds: Map<string, Path>;
  issues: FieldIssue[];
}

function checkGraph(graph: Graph, path: Path, ctx: GraphContext) {
  const { issues } = ctx;
  const ids = new Set<string>();
  graph.blocks.forEach((block, i) => {
    const at = [...path, 'blocks', i];
    if (RESERVED_IDS.has(block.id)) issues.push(issue([...at, 'id'], `"${block.id}" is reserved`));
    const seen = ctx.allIds.get(block.id);
    if (seen)
      issues.push(issue([...at, 'id'], `Duplicate block id "${block.id}" (also at ${seen.join('.')})`));
    else ctx.allIds.set(block.id, at);
    ids.add(block.id);
  });
  const edgeIssues = checkEdges(graph, ids, path, issues);
  const order = edgeIssues ? null : topologicalOrder(graph, path, issues);
  graph.blocks.forEach((block, i) => {
    const at = [...path, 'blocks', i];
    const type = BLOCK_TYPES.get(block.type);
    if (!type) {
      issues.push(
        issue(
          [...at, 'type'],
          `Unknown block type "${block.type}" (known: ${[...BLOCK_TYPES.keys()].join(', ')})`,
          'invalid_value',
        ),
      );
      return;
    }
    const { id: _id, type: _type, retry, ...fields } = block;
    if (retry !== undefined) checkRetry(block.type, retry, [...at, 'retry'], issues);
    const result = type.schema.safeParse(fields);
    if (!result.success) {
      for (const i of result.error.issues) {
        // A field written as a reference is checked when it resolves, at run time.
        if (isReferenceValue(valueAt(fields, i.path as Path))) continue;
        issues.push({ code: i.code, path: [...at, ...(i.path as Path)], message: i.message });
      }
    }
    if (order) {
      const before = new Set([...ctx.outer, ...ancestors(graph, block.id)]);
      checkReferences(block, type.graphField, at, before, ctx);
      if (type.graphField && Array.isArray(block[type.graphField])) {
        checkGraph(
          {
            blocks: block[type.graphField] as BlockConfig[],
            edges: (block.edges as Edge[] | undefined) ?? [],
          },
          at,
          { ...ctx, outer: before, inLoop: true },
        );
      }
    }
  });
  checkBranches(graph, path, issues);
}

// `retry` is the executor's field, not the block type's: every block may carry it (runner/executor/retry.ts).
function checkRetry(type: string, retry: unknown, at: Path, issues: FieldIssue[]) {
  const result = retrySchema.safeParse(retry);
  if (!result.success) {
    for (const i of result.error.issues)
      issues.push({ code: i.code, path: [...at, ...(i.path as Path)], message: i.message });
    return;
  }
  if (result.data.retryOn && !RETRY_ON_TYPES.has(type)) {
    issues.push(
      issue(
        [...at, 'retryOn'],
        `retryOn applies to ${[...RETRY_ON_TYPES].join(', ')} blocks; a ${type} block retries its transient failures without it`,
      ),
    );
  }
}

function checkEdges(graph: Graph, ids: Set<string>, path: Path, issues: FieldIssue[]): boolean {
  let bad = false;
  graph.edges.forEach((edge, i) => {
    for (const end of ['from', 'to'] as const) {
      if (!ids.has(edge[end])) {
        bad = true;
        issues.push(
          issue([...path, 'edges', i, end], `Edge ${end} "${edge[end]}" is not a block of this graph`),
        );
      }
    }
  });
  return bad;
}

// Condition edges must name one of the condition's branches; other blocks' edges carry no branch or `error`.
function checkBranches(graph: Graph, path: Path, issues: FieldIssue[]) {
  const byId = new Map(graph.blocks.map((b) => [b.id, b]));
  graph.edges.forEach((edge, i) => {
    const from = byId.get(edge.from);
    if (!from || edge.branch === undefined || edge.branch === 'error') return;
    if (from.type === 'approval') {
      if (!APPROVAL_BRANCHES.includes(edge.branch))
        issues.push(
          issue(
            [...path, 'edges', i, 'branch'],
            `"${edge.branch}" is not a branch of approval "${from.id}" (${APPROVAL_BRANCHES.join(', ')} or error)`,
          ),
        );
      return;
    }
    const branches =
      from.type === 'condition' && Array.isArray(from.branches) ? (from.branches as { id: string }[]) : [];
    if (!branches.some((b) => b.id === edge.branch)) {
      issues.push(
        issue(
          [...path, 'edges', i, 'branch'],
          from.type === 'condition'
            ? `"${edge.branch}" is not a branch of condition "${from.id}"`
            : `Only condition and approval edges name a branch (or "error"); "${from.id}" is a ${from.type} block`,
        ),
      );
    }
  });
}

function topologicalOrder(graph: Graph, path: Path, issues: FieldIssue[]): string[] | null {
  const indegree = new Map(graph.blocks.map((b) => [b.id, 0]));
  for (const e of graph.edges) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const queue = graph.blocks.filter((b) => indegree.get(b.id) === 0).map((b) => b.id);
  const order: string[] = [];
  while (queue.length) {
    const id = queue.shift() as string;
    order.push(id);
    for (const e of graph.edges) {
      if (e.from !== id) continue;
      const n = (indegree.get(e.to) ?? 0) - 1;
      indegree.set(e.to, n);
      if (n === 0) queue.push(e.to);
    }
  }
  if (order.length === graph.blocks.length) return order;
  const cyclic = graph.blocks.filter((b) => !order.includes(b.id)).map((b) => b.id);
  const at = graph.edges.findIndex((e) => cyclic.includes(e.from) && cyclic.includes(e.to));
  issues.push(
    issue(
      [...path, 'edges', Math.max(at, 0)],
      `Cycle between blocks ${cyclic.map((c) => `"${c}"`).join(', ')}`,
    ),
  );
  return null;
}

/** The blocks that always finish before `id` starts: everything upstream of it. */
export function ancestors(graph: Graph, id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length) {
    const current = stack.pop() as string;
    for (const e of graph.edges) {
      if (e.to === current && !seen.has(e.from)) {
        seen.add(e.from);
        stack.push(e.from);
      }
    }
  }
  return seen;
}

function checkReferences(
  block: BlockConfig,
  graphField: string | undefined,
  at: Path,
  before: Set<string>,
  ctx: GraphContext,
) {
  const isRoot = (name: string) => name === 'start' || ctx.allIds.has(name) || LOOP_ROOTS.has(name);
  walkStrings(block, at, graphField, (text, path) => {
    for (const ref of findReferences(text, isRoot)) {
      if (ref.root === 'start') continue;
      if (LOOP_ROOTS.has(ref.root)) {
        if (!ctx.inLoop)
          ctx.issues.push(issue(path, `${ref.text} is only available inside a loop or parallel body`));
        continue;
      }
      if (ref.root === block.id) ctx.issues.push(issue(path, `${ref.text}: a block cannot refer to itself`));
      else if (!ctx.allIds.has(ref.root))
        ctx.issues.push(issue(path, `${ref.text} refers to a missing block "${ref.root}"`));
      else if (!before.has(ref.root)) {
        ctx.issues.push(
          issue(path, `${ref.text}: block "${ref.root}" does not run before "${block.id}" (add an edge)`),
        );
      }
    }
  });
}

function walkStrings(
  value: unknown,
  path: Path,
  skipKey: string | undefined,
  visit: (s: string, p: Path) => void,
) {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walkStrings(v, [...path, i], undefined, visit);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      // A nested graph's blocks are checked as their own graph, with their own scope.
      if (k === skipKey || (skipKey && k === 'edges')) continue;
      walkStrings(v, [...path, k], undefined, visit);
    }
  }
}

function valueAt(value: unknown, path: Path): unknown {
  let v = value;
  for (const k of path)
    v = v && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

const isReferenceValue = (v: unknown) =>
  typeof v === 'string' && (/<[A-Za-z][A-Za-z0-9_-]*(\.[^>]+)?>/.test(v) || /\{\{\w+\}\}/.test(v));

const issue = (path: Path, message: string, code = 'custom'): FieldIssue => ({ code, path, message });
