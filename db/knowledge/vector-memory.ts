// Each process's in-memory postings of knowledge bases' chunk vectors (db/knowledge/sparse-postings.ts),
// which answer vector searches exactly where pgvector's HNSW index is slow and approximate: lexical
// embeddings (the default local model), whose vectors are sparse. Dense vectors (a provider's model)
// stay with the index, which serves them well; so does any base that does not fit the memory budget.
//
// - Loading: a base's vectors are read on its first search, a page of chunks at a time, in the
//   background; that search waits for it up to `waitMs` and is otherwise answered by the index.
// - Freshness: every search first reads the chunks written since this process last looked (migration
//   0026: `written_xid >= ` the xmin of the snapshot it last read under), so a search sees every write
//   committed before it began, whichever process wrote. Deleted chunks are not read: the search's own
//   check of its candidates (search.ts) finds them gone and forgets them here.
// - Rebuilds: when the rows written since the build, or the forgotten ones, are many, the base is
//   loaded again in the background while the old postings keep answering.
// - Memory: at most `memoryBytes` per process (KNOWLEDGE_INDEX_MEMORY_MB); the base used longest ago
//   makes room, and a base unused for `idleMs` is dropped.
import type { Config } from '../../config.ts';
import { isDb, type Queryable } from '../client.ts';
import { bytesPerRow, dimensionShares, PostingsBuilder } from './postings-builder.ts';
import type { SparsePostings } from './sparse-postings.ts';
import { appendSparsevec, SparseRows } from './sparse-rows.ts';
import { byScore, type ScoredId } from './top-k.ts';

export interface VectorMemoryOptions {
  /** Bytes of postings a process keeps; 0 turns the postings off (every search uses the index). */
  memoryBytes: number;
  /** How long a search waits for a base's first load before the index answers it instead. */
  waitMs: number;
  /** A base unused this long is dropped. */
  idleMs: number;
  /** Rows read a page at a time; four pages' worth are read before the postings' layout is decided. */
  pageRows: number;
  now: () => number;
}

const DEFAULTS: VectorMemoryOptions = {
  memoryBytes: 256 * 1024 * 1024,
  waitMs: 250,
  idleMs: 15 * 60_000,
  // Each page's vectors are text first (up to 11 KB a chunk): smaller pages leave less of it for the
  // collector at once (peak RSS of a load of 20,000 chunks of 1,024 tokens 349 -> about 300 MB at 500).
  pageRows: 500,
  now: Date.now,
};
/**
 * Vectors with more than this share of values set are a provider model's dense floats (every value
 * set): the index serves them. Lexical vectors leave values at exactly zero, fewer the longer the
 * chunk: a local-model chunk of 150 tokens sets about 16 % of 1,536, of 1,024 tokens (the default
 * chunking) about 47 %, of 4,000 (the largest) about 75 % (bench/lib/synthetic-corpus.ts's text).
 */
const MAX_DENSITY = 0.9;
/** The least a row can take once built (its id, xid, score, and the id map), for a first admission. */
const MIN_BYTES_PER_ROW = 64;
const FIRST_PAGE_ROWS = 50;
/** Rows taken beyond the count without growing the columns (written between the count and the read). */
const CAPACITY_SLACK = 256;
/** A base that could not be served (dense, too big, failed to load) is tried again after this. */
const RETRY_MS = 10 * 60_000;

type State =
  | { kind: 'loading'; done: Promise<void> }
  | { kind: 'ready' }
  | { kind: 'unserved'; since: number };

class BaseVectors {
  state: State;
  postings: SparsePostings | null = null;
  /** xmin of the snapshot the postings are current to, as text (xid8). */
  cursor = '0';
  lastUsed: number;
  reloading = false;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  readonly id: string;

  constructor(id: string, now: number) {
    this.id = id;
    this.lastUsed = now;
    this.state = { kind: 'unserved', since: Number.NEGATIVE_INFINITY };
  }

  get bytes(): number {
    return this.postings?.bytes ?? 0;
  }

  /**
   * Reads the chunks written since the cursor. Refreshes run one at a time per base; a caller
   * arriving while one runs waits for the next, whose snapshot is taken after it arrived.
   */
  refresh(db: Queryable): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) {
      this.running = this.readChanges(db).finally(() => {
        this.running = null;
      });
      return this.running;
    }
    this.queued = this.running
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.refresh(db);
      });
    return this.queued;
  }

  private async readChanges(db: Queryable): Promise<void> {
    const postings = this.postings;
    if (!postings) return;
    const rows = await db.query<{ xmin: string; id: string | null; x: string; v: string }>(
      `select s.xmin, c.id, c.x, c.v
         from (select pg_snapshot_xmin(pg_current_snapshot())::text as xmin) s
         left join lateral (select id, written_xid::text as x, embedding::sparsevec::text as v
                              from knowledge_chunks where knowledge_base_id = $1 and written_xid >= $2::xid8) c on true`,
      [this.id, this.cursor],
    );
    const changed = new SparseRows();
    for (const r of rows) if (r.id !== null) appendSparsevec(changed, Number(r.id), Number(r.x), r.v);
    if (this.postings !== postings) return; // A reload swapped in newer postings meanwhile.
    postings.upsert(changed);
    this.cursor = rows[0]?.xmin ?? this.cursor;
  }
}

export class VectorMemory {
  private readonly options: VectorMemoryOptions;
  private readonly bases = new Map<string, BaseVectors>();

  constructor(options: Partial<VectorMemoryOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  /**
   * Postings for these bases, current to every write committed before the call, or null when any of
   * them is not served from memory (dense vectors, over budget, still loading after `waitMs`).
   */
  async open(db: Queryable, baseIds: readonly string[]): Promise<OpenPostings | null> {
    if (this.options.memoryBytes <= 0) return null;
    this.dropIdle();
    const now = this.options.now();
    const bases = baseIds.map((id) => this.base(id, now));
    for (const base of bases) if (base.state.kind === 'unserved') this.startLoad(db, base);
    const loading = bases.flatMap((b) => (b.state.kind === 'loading' ? [b.state.done] : []));
    if (loading.length) await waitAtMost(Promise.all(loading), this.options.waitMs);
    if (bases.some((b) => b.state.kind !== 'ready' || !b.postings)) return null;
    try {
      await Promise.all(bases.map((b) => b.refresh(db)));
    } catch {
      return null; // The index answers; the next search reads the same changes again.
    }
    for (const base of bases) if (base.postings?.stale && !base.reloading) this.startReload(db, base);
    return new OpenPostings(new Map(bases.map((b) => [b.id, b.postings as SparsePostings])));
  }

  /** Whether every one of these bases' postings is loaded here (so opening them costs one read). */
  holds(baseIds: readonly string[]): boolean {
    return (
      this.options.memoryBytes > 0 &&
      baseIds.every((id) => this.bases.get(id)?.state.kind === 'ready' && this.bases.get(id)?.postings)
    );
  }

  /** Bytes held by every base's postings. */
  get bytes(): number {
    let sum = 0;
    for (const b of this.bases.values()) sum += b.bytes;
    return sum;
  }

  private base(id: string, now: number): BaseVectors {
    let base = this.bases.get(id);
    if (!base) {
      base = new BaseVectors(id, now);
      this.bases.set(id, base);
    }
    base.lastUsed = now;
    return base;
  }

  private startLoad(db: Queryable, base: BaseVectors): void {
    const now = this.options.now();
    if (base.state.kind === 'unserved' && now - base.state.since < RETRY_MS) return;
    const done = this.load(db, base).then(
      (loaded) => {
        if (loaded) base.state = { kind: 'ready' };
        else this.unserve(base);
      },
      () => this.unserve(base),
    );
    base.state = { kind: 'loading', done };
  }

  private startReload(db: Queryable, base: BaseVectors): void {
    base.reloading = true;
    this.load(db, base)
      .then(
        (loaded) => {
          // Grown past the budget, or its vectors turned dense (a new model): the index answers.
          if (!loaded) this.unserve(base);
        },
        () => {}, // The old postings go on answering; the next search tries again.
      )
      .finally(() => {
        base.reloading = false;
      });
  }

  private unserve(base: BaseVectors): void {
    base.postings = null;
    base.state = { kind: 'unserved', since: this.options.now() };
  }

  /**
   * Reads a base's vectors and builds its postings, a page at a time; false when it is not to be
   * served from memory. The first rows read decide the layout (which dimensions get a dense column)
   * and foretell the size; from then on each page goes into the postings as it arrives.
   */
  private async load(db: Queryable, base: BaseVectors): Promise<boolean> {
    const [head] = await db.query<{ n: number; xmin: string }>(
      `select count(*)::int as n, pg_snapshot_xmin(pg_current_snapshot())::text as xmin
         from knowledge_chunks where knowledge_base_id = $1`,
      [base.id],
    );
    const count = head?.n ?? 0;
    if (!this.makeRoom(base, count * MIN_BYTES_PER_ROW)) return false;
    // The rows read before the layout is decided.
    const first = new SparseRows();
    let builder: PostingsBuilder | null = null;
    let dimensions = 0;
    let after = 0;
    for (let pages = 1; ; pages++) {
      // A short first page tells dense vectors (20 KB each as text) before many are read.
      const { pageRows } = this.options;
      const limit = pages > 1 ? pageRows : Math.min(FIRST_PAGE_ROWS, pageRows);
      const page = await db.query<{ id: string; x: string; v: string }>(
        `select id, written_xid::text as x, embedding::sparsevec::text as v from knowledge_chunks
          where knowledge_base_id = $1 and id > $2 order by id limit ${limit}`,
        [base.id, after],
      );
      const rows = builder ? new SparseRows() : first;
      for (const r of page) dimensions = appendSparsevec(rows, Number(r.id), Number(r.x), r.v);
      if (rows.count && rows.length > rows.count * dimensions * MAX_DENSITY) return false;
      if (builder) builder.add(rows);
      else {
        const layout = first.count >= 4 * pageRows;
        // The first page, then the first rows the layout is decided from, foretell what the whole
        // base will take (denser rows, more bytes).
        const shares = pages === 1 || layout ? dimensionShares(first, dimensions) : null;
        if (shares && first.count && !this.makeRoom(base, count * bytesPerRow(shares))) return false;
        if (layout) builder = this.startBuild(first, dimensions, count);
      }
      if (page.length < limit) break;
      after = Number(page[page.length - 1]?.id);
    }
    // An empty base has no dimension count yet: its first chunks arrive through the refreshes.
    builder ??= this.startBuild(first, dimensions || 1536, count);
    const postings = await builder.finish();
    if (!this.makeRoom(base, postings.bytes)) return false;
    base.postings = postings;
    base.cursor = head?.xmin ?? '0';
    // Rows written while it loaded are read again by the next refresh, from this snapshot on.
    return true;
  }

  /** A builder for about `count` rows laid out by `first`'s, which it takes in. */
  private startBuild(first: SparseRows, dimensions: number, count: number): PostingsBuilder {
    const builder = new PostingsBuilder(dimensionShares(first, dimensions), count + CAPACITY_SLACK);
    builder.add(first);
    return builder;
  }

  /** Frees memory for `bytes` more by dropping the bases used longest ago; false when it cannot. */
  private makeRoom(loading: BaseVectors, bytes: number): boolean {
    if (bytes > this.options.memoryBytes) return false;
    const others = [...this.bases.values()]
      .filter((b) => b !== loading && b.postings)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    let held = this.bytes - loading.bytes;
    for (const other of others) {
      if (held + bytes <= this.options.memoryBytes) break;
      held -= other.bytes;
      this.bases.delete(other.id);
    }
    return held + bytes <= this.options.memoryBytes;
  }

  private dropIdle(): void {
    const now = this.options.now();
    for (const [id, base] of this.bases) {
      if (now - base.lastUsed > this.options.idleMs && base.state.kind !== 'loading') this.bases.delete(id);
    }
  }
}

/** The postings of the bases one search reads. */
export class OpenPostings {
  private readonly byBase: Map<string, SparsePostings>;
  private readonly postings: SparsePostings[];

  constructor(byBase: Map<string, SparsePostings>) {
    this.byBase = byBase;
    this.postings = [...byBase.values()];
  }

  /** The postings of some of these bases; null when one of them is not among them. */
  only(baseIds: readonly string[]): OpenPostings | null {
    const some = new Map<string, SparsePostings>();
    for (const id of baseIds) {
      const postings = this.byBase.get(id);
      if (!postings) return null;
      some.set(id, postings);
    }
    return new OpenPostings(some);
  }

  /** Products of query and stored values a search with this query vector sums (its cost). */
  products(query: Float32Array): number {
    let sum = 0;
    for (const p of this.postings) sum += p.products(query);
    return sum;
  }

  /** The `k` chunks of highest dot product with the query vector, best first. */
  nearest(query: Float32Array, k: number): ScoredId[] {
    const all = this.postings.flatMap((p) => p.nearest(query, k));
    return this.postings.length === 1 ? all : all.sort(byScore).slice(0, k);
  }

  /**
   * How far apart two chunks' scores may be in the postings and yet in the other order by their
   * exact vectors: each stored value is off by at most half a unit.
   */
  tolerance(query: Float32Array): number {
    let sum = 0;
    for (const w of query) sum += Math.abs(w);
    return sum;
  }

  /** Forgets chunks the database no longer has. */
  forget(ids: readonly number[]): void {
    for (const p of this.postings) p.remove(ids);
  }
}

const memories = new WeakMap<object, VectorMemory>();

/**
 * The vector memory of a database handle (one per process and database); null for a transaction,
 * whose postings would last only as long as it.
 */
export function vectorMemory(db: Queryable): VectorMemory | null {
  if (!isDb(db)) return null;
  let memory = memories.get(db);
  if (!memory) {
    memory = new VectorMemory();
    memories.set(db, memory);
  }
  return memory;
}

/** Sets the options of a database handle's vector memory at start-up (or, in a bench, between measures). */
export function configureVectorMemory(db: Queryable, options: Partial<VectorMemoryOptions>): void {
  memories.set(db, new VectorMemory(options));
}

/** The vector memory's options a configuration asks for. */
export function vectorMemoryOptions(
  config: Pick<Config, 'KNOWLEDGE_INDEX_MEMORY_MB' | 'KNOWLEDGE_INDEX_WAIT_MS'>,
): Partial<VectorMemoryOptions> {
  return {
    memoryBytes: config.KNOWLEDGE_INDEX_MEMORY_MB * 1024 * 1024,
    waitMs: config.KNOWLEDGE_INDEX_WAIT_MS,
  };
}

function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
