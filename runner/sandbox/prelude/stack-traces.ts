// Stack traces keep only the user's own frames; the formatter is locked so that user code cannot swap in
// one that receives the raw call sites of the host frames.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

export function lockStackTraces(
  k: Intrinsics,
  errorText: (error: unknown) => string,
  filename: string,
): void {
  const { g, defineProperty, CtxError } = k;

  // Stack traces: only the user's own frames; the host frames below them are noise (and host paths).
  function prepareStackTrace(error: unknown, sites: { getFileName(): unknown; getLineNumber(): unknown }[]) {
    let text = errorText(error);
    for (const site of sites) {
      if (site.getFileName() === filename && Number(site.getLineNumber()) >= 1) text += `\n    at ${site}`;
    }
    return text;
  }
  // Locked (with the `Error` binding Node looks it up through), so user code cannot swap in a formatter
  // that receives the raw call sites of those host frames.
  defineProperty(CtxError, 'prepareStackTrace', {
    value: prepareStackTrace,
    writable: false,
    configurable: false,
  });
  defineProperty(g, 'Error', { value: CtxError, writable: false, configurable: false, enumerable: false });
}
