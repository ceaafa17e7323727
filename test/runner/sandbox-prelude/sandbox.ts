// The function pool as the per-piece prelude tests use it (runner/sandbox/prelude/<piece>.ts): one thread,
// so consecutive runs share a worker, and helpers that expect a value or an error.
import { afterAll } from 'vitest';
import {
  createFunctionPool,
  type FunctionOutcome,
  type FunctionPoolOptions,
  type FunctionTask,
} from '../../../runner/sandbox/pool.ts';

export function sandbox(options: FunctionPoolOptions = {}) {
  const pool = createFunctionPool({ minThreads: 1, maxThreads: 1, ...options });
  afterAll(() => pool.destroy());

  function run(code: string, options: Partial<FunctionTask> = {}): Promise<FunctionOutcome> {
    return pool.run({ code, language: 'javascript', scope: {}, timeoutMs: 5000, ...options });
  }

  async function value(code: string, options: Partial<FunctionTask> = {}): Promise<unknown> {
    const outcome = await run(code, options);
    if (!outcome.ok) throw new Error(`expected ok, got: ${outcome.error}`);
    return outcome.value;
  }

  async function error(code: string, options: Partial<FunctionTask> = {}): Promise<string> {
    const outcome = await run(code, options);
    if (outcome.ok) throw new Error(`expected a failure, got: ${JSON.stringify(outcome.value)}`);
    return outcome.error;
  }

  return { run, value, error };
}
