// A BlockContext for calling one block's `run` directly, for blocks that nest nothing and run no
// user code (http, agent): those parts throw if touched.
import type { BlockContext, RunnerSettings } from '../../runner/blocks/block.ts';

const unused = (): never => {
  throw new Error('not used by this block');
};

export function blockContext(
  settings: Partial<RunnerSettings> = {},
  signal = new AbortController().signal,
): BlockContext {
  return {
    executionId: 'exec-1',
    workspaceId: 'ws-1',
    workflowId: 'wf-1',
    signal,
    pool: undefined as never,
    db: undefined as never,
    embedders: undefined as never,
    scope: {},
    log: () => {},
    substituteCode: unused,
    runGraph: unused,
    runWorkflow: unused,
    settings: {
      httpAllowList: [],
      httpMaxResponseBytes: 1_000_000,
      functionTimeoutMs: 5_000,
      functionMemoryMb: 64,
      ...settings,
    },
  };
}
