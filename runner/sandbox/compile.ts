// Compiling user code for the function pool's worker (runner/sandbox/worker.ts): a function body, JavaScript
// or TypeScript (type-stripped), wrapped into a script that hands the body, as an async function, to the
// entry the prelude defines for each task (runner/sandbox/prelude.ts).
import { stripTypeScriptTypes } from 'node:module';
import vm from 'node:vm';

/** The global the compiled script calls with the user's function. */
export const ENTRY_NAME = '__wf_run__';
/** The compiled script's file name: stack traces keep only its frames. */
export const SCRIPT_FILENAME = 'function.js';
const MAX_CACHED_SCRIPTS = 256;

const AsyncFunction = (async () => {}).constructor as new (body: string) => unknown;
const TS_PREFIX = '(async function () {\n';
const TS_SUFFIX = '\n})';
const scriptCaches = { javascript: new Map<string, vm.Script>(), typescript: new Map<string, vm.Script>() };

/** Compiled scripts are context-independent, so one per code string serves every later execution. */
export function compile(
  code: string,
  language: 'javascript' | 'typescript',
  importModuleDynamically: () => never,
): vm.Script {
  const cache = scriptCaches[language];
  if (!cache) throw new TypeError(`Unsupported language: ${String(language)}`);
  const cached = cache.get(code);
  if (cached) {
    cache.delete(code);
    cache.set(code, cached);
    return cached;
  }
  const body = language === 'typescript' ? stripTypes(code) : code;
  // Parsing the body alone as a function body rejects code that would close the wrapper below and run
  // statements outside it.
  new AsyncFunction(body);
  const script = new vm.Script(`${ENTRY_NAME}(async function () {\n${body}\n});`, {
    filename: SCRIPT_FILENAME,
    lineOffset: -1,
    importModuleDynamically,
  });
  cache.set(code, script);
  if (cache.size > MAX_CACHED_SCRIPTS) cache.delete(cache.keys().next().value as string);
  return script;
}

function stripTypes(code: string): string {
  // A bare body (top-level `return`, `await`) is not a valid TypeScript module; the wrapper makes it one,
  // and strip mode only blanks out types, so the body keeps its exact position inside.
  const stripped = stripTypeScriptTypes(`${TS_PREFIX}${code}${TS_SUFFIX}`, { mode: 'strip' });
  return stripped.slice(TS_PREFIX.length, stripped.length - TS_SUFFIX.length);
}

export function compileErrorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `SyntaxError: ${String(error)}`;
}
