// The function's outcome (its value as JSON text, or its error as text) and `console`, whose lines go to
// the task's log through the bridge: one piece, as an error's text and a logged value's share `inspect`.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

export function defineConsole(k: Intrinsics) {
  const { jsonStringify, CtxError, CtxTypeError, CtxMap, CtxWeakSet, hostLog, hostSettle } = k;

  function errorText(error: unknown): string {
    if (typeof error === 'string') return error;
    if (error instanceof CtxError) {
      try {
        return error.message ? `${error.name}: ${error.message}` : String(error.name);
      } catch {
        return 'Error';
      }
    }
    return inspect(error);
  }

  function fail(error: unknown): void {
    hostSettle(false, errorText(error));
  }

  function succeed(value: unknown): void {
    if (typeof value === 'function' || typeof value === 'symbol') {
      fail(new CtxTypeError(`Function returned a ${typeof value}, which is not JSON data`));
      return;
    }
    let text: string | undefined;
    try {
      text = jsonStringify(value);
    } catch (error) {
      fail(new CtxTypeError(`Function returned a value that is not JSON data (${errorText(error)})`));
      return;
    }
    // undefined (and a toJSON answering undefined) becomes null.
    hostSettle(true, text === undefined ? 'null' : text);
  }

  // console ----------------------------------------------------------------------------------------------

  function inspect(value: unknown): string {
    switch (typeof value) {
      case 'string':
        return jsonStringify(value);
      case 'bigint':
        return `${value}n`;
      case 'symbol':
        return value.toString();
      case 'function':
        return `[Function: ${value.name || '(anonymous)'}]`;
      case 'object':
        return value === null ? 'null' : inspectObject(value);
      default:
        return String(value);
    }
  }

  function inspectObject(value: object): string {
    if (value instanceof CtxError) return value.stack ?? errorText(value);
    if (value instanceof CtxMap) return `Map(${value.size}) ${inspectObject([...value])}`;
    if (value instanceof Set) return `Set(${value.size}) ${inspectObject([...value])}`;
    const seen = new CtxWeakSet<object>();
    try {
      return jsonStringify(value, (_key, item: unknown) => {
        if (typeof item === 'bigint') return `${item}n`;
        if (typeof item === 'function') return `[Function: ${item.name || '(anonymous)'}]`;
        if (typeof item === 'symbol') return item.toString();
        if (typeof item === 'object' && item !== null) {
          if (seen.has(item)) return '[Circular]';
          seen.add(item);
        }
        return item;
      });
    } catch {
      return String(value);
    }
  }

  let consoleOpen = true;
  function emit(level: string, args: unknown[]): void {
    if (!consoleOpen) return;
    let line = '';
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      line += (i === 0 ? '' : ' ') + (typeof arg === 'string' ? arg : inspect(arg));
    }
    consoleOpen = hostLog(level, line);
  }
  const console = {
    log: (...args: unknown[]) => emit('log', args),
    info: (...args: unknown[]) => emit('info', args),
    warn: (...args: unknown[]) => emit('warn', args),
    error: (...args: unknown[]) => emit('error', args),
    debug: (...args: unknown[]) => emit('debug', args),
  };

  /** A new task's console writes again (the host stops it once the task's log is full). */
  function openConsole(): void {
    consoleOpen = true;
  }
  return { errorText, fail, succeed, console, openConsole };
}
