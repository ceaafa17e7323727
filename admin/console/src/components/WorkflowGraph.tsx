// A workflow definition drawn as a graph in SVG: blocks in columns by topological depth (a block
// sits one column right of its deepest predecessor), ordered in each column by where their
// predecessors are, edges as curves labelled with their branch (an `error` branch dashed red).
// The bodies of loop and parallel blocks are drawn the same way under the main graph.

interface Block {
  id: string;
  type: string;
  blocks?: unknown;
  edges?: unknown;
}
interface Edge {
  from: string;
  to: string;
  branch?: string;
}
export interface GraphDefinition {
  blocks?: unknown;
  edges?: unknown;
}

const NODE_W = 168;
const NODE_H = 50;
const GAP_X = 76;
const GAP_Y = 24;
const PAD = 16;

const asBlocks = (v: unknown): Block[] =>
  Array.isArray(v)
    ? v.filter(
        (b): b is Block =>
          typeof b === 'object' &&
          b !== null &&
          typeof (b as Block).id === 'string' &&
          typeof (b as Block).type === 'string',
      )
    : [];
const asEdges = (v: unknown): Edge[] =>
  Array.isArray(v)
    ? v.filter(
        (e): e is Edge =>
          typeof e === 'object' &&
          e !== null &&
          typeof (e as Edge).from === 'string' &&
          typeof (e as Edge).to === 'string',
      )
    : [];

export interface Placed {
  block: Block;
  x: number;
  y: number;
}

/** Columns by longest path from a block without predecessors; a cycle (an invalid draft) is cut. */
export function layoutGraph(blocks: Block[], edges: Edge[]) {
  const ids = new Set(blocks.map((b) => b.id));
  const valid = edges.filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to);
  const preds = new Map<string, string[]>(blocks.map((b) => [b.id, []]));
  for (const e of valid) preds.get(e.to)?.push(e.from);
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const d = Math.max(-1, ...(preds.get(id) ?? []).map(depthOf)) + 1;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  const columns: Block[][] = [];
  for (const b of blocks) {
    const d = depthOf(b.id);
    const column = columns[d] ?? [];
    column.push(b);
    columns[d] = column;
  }
  // Each column sorted by the mean row of its predecessors: fewer crossings, no search.
  const row = new Map<string, number>();
  const placed = new Map<string, Placed>();
  columns.forEach((col, c) => {
    const key = (b: Block) => {
      const rows = (preds.get(b.id) ?? []).map((p) => row.get(p) ?? 0);
      return rows.length ? rows.reduce((s, r) => s + r, 0) / rows.length : 0;
    };
    const sorted = c === 0 ? col : [...col].sort((a, b) => key(a) - key(b));
    sorted.forEach((b, r) => {
      row.set(b.id, r);
      placed.set(b.id, { block: b, x: PAD + c * (NODE_W + GAP_X), y: PAD + r * (NODE_H + GAP_Y) });
    });
  });
  const tallest = Math.max(1, ...columns.map((c) => c?.length ?? 0));
  return {
    placed,
    edges: valid,
    width: PAD * 2 + columns.length * NODE_W + Math.max(0, columns.length - 1) * GAP_X,
    height: PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y,
  };
}

export function WorkflowGraph(props: { definition: GraphDefinition; title?: string }) {
  const blocks = asBlocks(props.definition.blocks);
  const { placed, edges, width, height } = layoutGraph(blocks, asEdges(props.definition.edges));
  const nested = blocks.filter((b) => asBlocks(b.blocks).length > 0);
  if (!blocks.length) return <p className="muted">No blocks to draw.</p>;
  return (
    <div className="graph">
      {props.title ? <h4>{props.title}</h4> : null}
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        style={{ maxWidth: '100%', height: 'auto' }}
        role="img"
        aria-label={`Workflow graph: ${blocks.length} blocks, ${edges.length} edges`}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" className="arrow-head" />
          </marker>
          <marker
            id="arrow-error"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" className="arrow-head error" />
          </marker>
        </defs>
        {edges.map((e, i) => {
          const a = placed.get(e.from);
          const b = placed.get(e.to);
          if (!a || !b) return null;
          // Edges joining the same two blocks (one per branch) bow apart, so each label shows.
          const twins = edges.filter((o) => o.from === e.from && o.to === e.to);
          const spread = (twins.indexOf(e) - (twins.length - 1) / 2) * 22;
          const x1 = a.x + NODE_W;
          const y1 = a.y + NODE_H / 2;
          const x2 = b.x - 2;
          const y2 = b.y + NODE_H / 2;
          const bend = Math.max(30, (x2 - x1) / 2);
          const error = e.branch === 'error';
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: two edges may join the same blocks on different branches
            <g key={i} className={`edge${error ? ' error' : ''}`}>
              <path
                d={`M${x1},${y1} C${x1 + bend},${y1 + spread * 1.4} ${x2 - bend},${y2 + spread * 1.4} ${x2},${y2}`}
                markerEnd={`url(#${error ? 'arrow-error' : 'arrow'})`}
              />
              {e.branch ? (
                <text
                  x={(x1 + x2) / 2}
                  y={(y1 + y2) / 2 + spread * 1.05 + (spread < 0 ? -3 : spread > 0 ? 11 : -4)}
                  textAnchor="middle"
                  className="edge-label"
                >
                  {e.branch}
                </text>
              ) : null}
            </g>
          );
        })}
        {[...placed.values()].map(({ block, x, y }) => {
          const inner = asBlocks(block.blocks).length;
          return (
            <g
              key={block.id}
              className={`node type-${block.type}`}
              transform={`translate(${x},${y})`}
              data-block={block.id}
            >
              <title>{`${block.id} (${block.type})`}</title>
              <rect width={NODE_W} height={NODE_H} rx={8} />
              <text x={12} y={21} className="node-id">
                {block.id.length > 20 ? `${block.id.slice(0, 19)}…` : block.id}
              </text>
              <text x={12} y={38} className="node-type">
                {block.type}
                {inner ? ` · ${inner} inside` : ''}
              </text>
            </g>
          );
        })}
      </svg>
      {nested.map((b) => (
        <WorkflowGraph
          key={b.id}
          definition={{ blocks: b.blocks, edges: b.edges }}
          title={`Inside ${b.id} (${b.type})`}
        />
      ))}
    </div>
  );
}
