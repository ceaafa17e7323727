// A new workflow in the picked workspace from a pasted JSON or YAML definition, created and deployed
// in one go; problems are shown at their paths and lines, and nothing is made until it is valid.
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { DefinitionEditor } from '../components/DefinitionEditor.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { WorkflowGraph } from '../components/WorkflowGraph.tsx';
import { parseDefinitionText, type TextIssue } from '../definition-text.ts';
import { deployText } from '../deploy.ts';
import { Link, navigate } from '../router.tsx';
import { useWorkspace } from '../workspace.tsx';

const EXAMPLE = `{
  "inputs": { "name": { "type": "string", "required": true } },
  "blocks": [
    { "id": "greet", "type": "function", "code": "return { message: \`Hello, \${inputs.name}!\` }" },
    { "id": "done", "type": "response", "data": { "message": "<greet.message>" } }
  ],
  "edges": [{ "from": "greet", "to": "done" }]
}
`;

export function NewWorkflow() {
  const { workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [text, setText] = useState(EXAMPLE);
  const [issues, setIssues] = useState<TextIssue[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const preview = parseDefinitionText(text).value as { blocks?: unknown; edges?: unknown } | undefined;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!workspace) return;
    setBusy(true);
    setError(null);
    setIssues([]);
    const outcome = await deployText(text, {
      workspaceId: workspace.id,
      name: name.trim(),
      ...(description.trim() ? { description: description.trim() } : {}),
    });
    setBusy(false);
    if (outcome.ok) {
      await queryClient.invalidateQueries({ queryKey: ['workflows.list'] });
      navigate(`/workflows/${outcome.workflowId}?deployed=${outcome.version}`);
      return;
    }
    setIssues(outcome.issues);
    setError(outcome.error ?? null);
  };

  return (
    <section>
      <div className="page-head">
        <h1>New workflow</h1>
        <span className="muted">{workspace ? `in ${workspace.name}` : ''}</span>
      </div>
      <p>
        <Link to="/workflows">← All workflows</Link>
      </p>
      <form className="card" onSubmit={submit}>
        <div className="form-row">
          <label>
            Name
            <input
              name="name"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              required
              maxLength={200}
            />
          </label>
          <label className="grow">
            Description
            <input
              name="description"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              maxLength={2000}
            />
          </label>
        </div>
        <h3>Definition (JSON or YAML)</h3>
        <DefinitionEditor value={text} onChange={setText} issues={issues} />
        <ErrorNotice error={error} title="Not deployed" />
        <button type="submit" disabled={busy || !workspace}>
          {busy ? 'Deploying…' : 'Create and deploy'}
        </button>
      </form>
      {preview ? (
        <div className="card">
          <h2>Graph</h2>
          <WorkflowGraph definition={preview} />
        </div>
      ) : null}
    </section>
  );
}
