// Test hook: a runner process started with RUNNER_HOLD_AT=<point> stops for good at that instant,
// after saying `held at <point>` on stdout, so a test can SIGKILL it exactly there
// (test/e2e/table-block-runners.test.ts). Unset in production: every point passes at once.
//   table-written:   a table block's writes sent, its checkpoint not yet, nothing committed
//   table-committed: the block's writes and checkpoint committed, the run not yet told
export type HoldPoint = 'table-written' | 'table-committed';

const holdAt = process.env.RUNNER_HOLD_AT;

export async function holdPoint(point: HoldPoint): Promise<void> {
  if (holdAt !== point) return;
  process.stdout.write(`held at ${point}\n`);
  await new Promise(() => {});
}
