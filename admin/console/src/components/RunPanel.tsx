// Runs a deployed workflow by hand (trigger `manual`, not metered) with inputs given as JSON,
// prefilled from the deployed version's input specs, and links to the execution it started.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { shortId } from '../format.ts';
import { Link } from '../router.tsx';
import { trpc } from '../trpc.ts';
import { ErrorNotice } from './ErrorNotice.tsx';

interface InputSpec {
  type?: string;
  default?: unknown;
}

const EXAMPLES: Record<string, unknown> = { string: '', number: 0, boolean: false, object: {}, array: [] };

/** Inputs to start from: each input's default, or an empty value of its type. */
export function sampleInputs(specs: Record<string, InputSpec> | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(specs ?? {}).map(([name, spec]) => [
      name,
      spec.default ?? EXAMPLES[spec.type ?? 'any'] ?? null,
    ]),
  );
}

export function RunPanel(props: { workflowId: string; inputSpecs: Record<string, InputSpec> | undefined }) {
  const [text, setText] = useState<string | null>(null);
  const [parseError, setParseError] = useState<string | null>(null);
  const shown = text ?? JSON.stringify(sampleInputs(props.inputSpecs), null, 2);
  const run = useMutation({
    mutationFn: (inputs: Record<string, unknown>) =>
      trpc.executions.run.mutate({ workflowId: props.workflowId, inputs }),
  });
  const start = () => {
    let inputs: unknown;
    try {
      inputs = JSON.parse(shown || '{}');
    } catch (err) {
      setParseError(`The inputs are not JSON: ${(err as Error).message}`);
      return;
    }
    if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
      setParseError('The inputs are a JSON object: {"name": "value"}');
      return;
    }
    setParseError(null);
    run.mutate(inputs as Record<string, unknown>);
  };
  return (
    <div>
      <label>
        Inputs (JSON)
        <textarea
          aria-label="Run inputs"
          className="code"
          rows={5}
          spellCheck={false}
          value={shown}
          onChange={(e) => setText(e.currentTarget.value)}
        />
      </label>
      {parseError ? <p className="notice error">{parseError}</p> : null}
      <ErrorNotice error={run.error} title="Not started" />
      <div className="actions">
        <button type="button" onClick={start} disabled={run.isPending}>
          {run.isPending ? 'Starting…' : 'Run'}
        </button>
        {run.data ? (
          <span className="notice good inline" role="status">
            Started execution{' '}
            <Link to={`/executions/${run.data.executionId}`}>
              <code>{shortId(run.data.executionId)}</code> – open it →
            </Link>
          </span>
        ) : null}
      </div>
    </div>
  );
}
