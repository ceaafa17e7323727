// Runs an MCP tool call: executes the workflow's deployed version through the same starter as a
// sync POST /api/workflows/{id}/execute (write permission, inputs checked against the deployed
// version, spend and rate limits, execution row and audit entry, result through the completion
// waiter), and shapes the outcome as a tool result. Every refusal a caller can act on (bad inputs,
// limits, permission) is a tool error the model reads, not a protocol error.
import type { Principal } from '../../../db/api-keys.ts';
import { type DoneNotice, getExecution } from '../../../db/executions.ts';
import { ServiceError } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { executionAnswers } from '../../execution-answer.ts';
import type { CallToolResult } from './sdk.ts';

/** The trigger recorded on executions started through MCP (the logs API filters on it). */
export const MCP_TRIGGER = 'mcp';

export interface ToolCall {
  principal: Principal;
  workflowId: string;
  arguments: Record<string, unknown>;
}

/** A tool error: the message as text, and the message and field issues as structured content. */
function toolError(err: ServiceError): CallToolResult {
  const lines = (err.details ?? []).map((d) => `${d.path.join('.')}: ${d.message}`);
  return {
    isError: true,
    content: [{ type: 'text', text: [err.message, ...lines].join('\n') }],
    structuredContent: { error: err.message, ...(err.details ? { details: err.details } : {}) },
  };
}

function finished(executionId: string, result: DoneNotice): CallToolResult {
  const _meta = { executionId };
  if (result.status !== 'completed') {
    const error = result.error ?? 'The workflow failed';
    return { isError: true, content: [{ type: 'text', text: error }], structuredContent: { error }, _meta };
  }
  const output = result.output ?? null;
  const isObject = typeof output === 'object' && output !== null && !Array.isArray(output);
  return {
    content: [{ type: 'text', text: JSON.stringify(output) }],
    ...(isObject ? { structuredContent: output as Record<string, unknown> } : {}),
    _meta,
  };
}

export function mcpToolCaller(deps: ApiDeps) {
  const executions = executionAnswers(deps);

  async function run({ principal, workflowId, arguments: given }: ToolCall): Promise<CallToolResult> {
    // The version deployed now runs: the listing the client saw may be a deployment older.
    const started = await executions.start({
      workflowId,
      by: { principal },
      inputs: () => given,
      mode: 'sync',
      trigger: MCP_TRIGGER,
    });
    const { executionId, admission } = started;
    if (!admission.admitted) throw new ServiceError(admission.status, admission.error);
    const result = await executions.result(started);
    if (result) return finished(executionId, result);
    // Still running: the caller can poll the job rather than hold the connection forever.
    const status = (await getExecution(deps.db, executionId))?.status ?? 'queued';
    const text = `The workflow is still running after ${deps.config.SYNC_WAIT_TIMEOUT_MS} ms: poll GET /api/jobs/${executionId} for its result`;
    return {
      isError: true,
      content: [{ type: 'text', text }],
      structuredContent: { error: text, taskId: executionId, status },
      _meta: { executionId },
    };
  }

  return async (call: ToolCall): Promise<CallToolResult> => {
    try {
      return await run(call);
    } catch (err) {
      if (err instanceof ServiceError) return toolError(err);
      throw err;
    }
  };
}
