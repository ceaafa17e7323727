// Group commit for hot statements: calls made in the same turn of the event loop are gathered and
// run as one statement, so N concurrent executions cost one round trip instead of N. A lone call
// waits only for the current turn to end (setImmediate), so latency at low load stays the same.
export function createBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  maxBatch = 256,
): (item: I) => Promise<O> {
  const pending: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    while (pending.length) {
      const batch = pending.splice(0, maxBatch);
      run(batch.map((p) => p.item)).then(
        (results) => {
          for (const [i, p] of batch.entries()) p.resolve(results[i] as O);
        },
        (err) => {
          for (const p of batch) p.reject(err);
        },
      );
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
