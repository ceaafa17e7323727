// Prints bench results as a markdown table, each figure beside its same-run baseline and their ratio.
export interface Row {
  measure: string;
  ours: number;
  baselineName: string;
  baseline: number;
  /** Whether a larger figure is the better one (rates) or the worse one (latencies). */
  higherIsBetter: boolean;
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

export function printTable(title: string, rows: Row[]) {
  console.log(`\n### ${title}\n`);
  console.log('| measure | ours | baseline | baseline figure | ours ÷ baseline |');
  console.log('|---|---:|---|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.measure} | ${fmt(r.ours)} | ${r.baselineName} | ${fmt(r.baseline)} | ${(r.ours / r.baseline).toFixed(2)} |`,
    );
  }
}
