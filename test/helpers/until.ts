// Polls a probe until it answers something (not undefined): for what a test waits on that it cannot
// be told of (a row's state, a request reaching a server). A probe that never answers is a failure
// naming what was awaited, after `tries` polls `everyMs` apart (20 s by default).
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  { tries = 800, everyMs = 25 }: { tries?: number; everyMs?: number } = {},
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
