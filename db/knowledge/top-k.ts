// The best (score, id) pairs of a stream of them, as the postings' search keeps them.

export interface ScoredId {
  id: number;
  score: number;
}

/** Highest score first, ties to the lower id. */
export const byScore = (a: ScoredId, b: ScoredId) => b.score - a.score || a.id - b.id;

/** The k best (score, id) pairs seen: a min-heap on score, ties to the lower id. */
export class TopK {
  private readonly scores: Float64Array;
  private readonly ids: Float64Array;
  private size = 0;
  private readonly k: number;
  /** Scores below this cannot enter (the lowest kept, once full). */
  floor = Number.NEGATIVE_INFINITY;
  constructor(k: number) {
    this.k = k;
    this.scores = new Float64Array(k);
    this.ids = new Float64Array(k);
  }

  offer(score: number, id: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, id, parent)) break;
        this.scores[i] = this.scores[parent] as number;
        this.ids[i] = this.ids[parent] as number;
        i = parent;
      }
      this.scores[i] = score;
      this.ids[i] = id;
      if (this.size === this.k) this.floor = this.scores[0] as number;
      return;
    }
    if (this.k === 0 || !this.better(score, id, 0)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.lessAt(right, left) ? right : left;
      if (!this.better(score, id, child)) break;
      this.scores[i] = this.scores[child] as number;
      this.ids[i] = this.ids[child] as number;
      i = child;
    }
    this.scores[i] = score;
    this.ids[i] = id;
    this.floor = this.scores[0] as number;
  }

  sorted(): ScoredId[] {
    const out: ScoredId[] = [];
    for (let i = 0; i < this.size; i++)
      out.push({ id: this.ids[i] as number, score: this.scores[i] as number });
    return out.sort(byScore);
  }

  /** Whether (score, id) ranks below the entry at i (lower score, or equal and a higher id). */
  private worse(score: number, id: number, i: number): boolean {
    const s = this.scores[i] as number;
    return score < s || (score === s && id > (this.ids[i] as number));
  }

  private better(score: number, id: number, i: number): boolean {
    const s = this.scores[i] as number;
    return score > s || (score === s && id < (this.ids[i] as number));
  }

  private lessAt(a: number, b: number): boolean {
    return this.worse(this.scores[a] as number, this.ids[a] as number, b);
  }
}
