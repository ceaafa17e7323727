// Timing for benches: runs an operation for a fixed count after a warm-up and reports its rate.
// Benches report ratios against a baseline measured in the same run, since the machine is shared.
export interface Measurement {
  name: string;
  opsPerSec: number;
  meanMs: number;
}

export async function measure(
  name: string,
  op: () => unknown,
  count = 500,
  concurrency = 1,
): Promise<Measurement> {
  for (let i = 0; i < Math.min(50, count); i++) await op();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await op();
    }),
  );
  const ms = performance.now() - start;
  return { name, opsPerSec: (count / ms) * 1000, meanMs: (ms / count) * concurrency };
}
