// Group commit for hot statements: calls that arrive while a batch is in flight are gathered and
// run together as the next batch, so N concurrent executions cost one round trip instead of N. A
// lone call under no load waits only for the current turn of the event loop to end (setImmediate);
// under load, batches grow by themselves to what arrives during one round trip.
export function createBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  options: { maxBatch?: number; maxInFlight?: number } = {},
): (item: I) => Promise<O> {
  const maxBatch = options.maxBatch ?? 256;
  const maxInFlight = options.maxInFlight ?? 1;
  const pending: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;
  let inFlight = 0;

  const flush = () => {
    scheduled = false;
    while (pending.length && inFlight < maxInFlight) {
      const batch = pending.splice(0, maxBatch);
      inFlight++;
      run(batch.map((p) => p.item))
        .then(
          (results) => {
            for (const [i, p] of batch.entries()) p.resolve(results[i] as O);
          },
          (err) => {
            for (const p of batch) p.reject(err);
          },
        )
        .finally(() => {
          inFlight--;
          schedule();
        });
    }
  };
  const schedule = () => {
    if (!scheduled && pending.length && inFlight < maxInFlight) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      schedule();
    });
}
