// One workflow: its graph (the draft, or any deployed version), its versions with roll back, a run
// by hand, and a new version deployed from a pasted JSON or YAML definition with the problems shown
// at their paths and lines.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { DefinitionEditor } from '../components/DefinitionEditor.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { RunPanel } from '../components/RunPanel.tsx';
import { WorkflowGraph } from '../components/WorkflowGraph.tsx';
import { presentDefinition, type TextIssue } from '../definition-text.ts';
import { deployText } from '../deploy.ts';
import { dateTime } from '../format.ts';
import { Link, useLocation } from '../router.tsx';
import { trpc } from '../trpc.ts';

export function Workflow(props: { id: string }) {
  const queryClient = useQueryClient();
  const { search } = useLocation();
  const workflow = useQuery({
    queryKey: ['workflows.get', props.id],
    queryFn: () => trpc.workflows.get.query({ id: props.id }),
  });
  const versions = useQuery({
    queryKey: ['workflows.versions', props.id],
    queryFn: () => trpc.workflows.versions.query({ id: props.id }),
  });
  const [shownVersion, setShownVersion] = useState<number | null>(null);
  const [text, setText] = useState<string | null>(null);
  const [issues, setIssues] = useState<TextIssue[]>([]);
  const [deployError, setDeployError] = useState<unknown>(null);
  const [deployed, setDeployed] = useState<number | null>(() => {
    const v = Number(new URLSearchParams(search).get('deployed'));
    return Number.isInteger(v) && v > 0 ? v : null;
  });
  const [busy, setBusy] = useState(false);

  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['workflows.get', props.id] }),
      queryClient.invalidateQueries({ queryKey: ['workflows.versions', props.id] }),
      queryClient.invalidateQueries({ queryKey: ['workflows.list'] }),
    ]);
  const rollback = useMutation({
    mutationFn: (version: number) => trpc.workflows.rollback.mutate({ id: props.id, version }),
    onSuccess: refresh,
  });

  const w = workflow.data;
  const current = w?.deployedVersion ?? null;
  const deployedDefinition = versions.data?.find((v) => v.version === current)?.definition;
  const shown = shownVersion === null ? null : versions.data?.find((v) => v.version === shownVersion);
  const editorText = text ?? (w ? JSON.stringify(presentDefinition(w.definition), null, 2) : '');

  const deploy = async () => {
    setBusy(true);
    setIssues([]);
    setDeployError(null);
    setDeployed(null);
    const outcome = await deployText(editorText, { workflowId: props.id });
    setBusy(false);
    if (outcome.ok) {
      setDeployed(outcome.version);
      setText(null);
      setShownVersion(null);
      await refresh();
    } else {
      setIssues(outcome.issues);
      setDeployError(outcome.error ?? null);
    }
  };

  return (
    <section>
      <div className="page-head">
        <h1>{w?.name ?? 'Workflow'}</h1>
        {w ? (
          current === null ? (
            <span className="badge off">not deployed</span>
          ) : (
            <span className="badge good">version {current} deployed</span>
          )
        ) : null}
      </div>
      <p>
        <Link to="/workflows">← All workflows</Link> ·{' '}
        <Link to={`/executions?workflow=${props.id}`}>Executions of this workflow</Link>
      </p>
      <ErrorNotice error={workflow.error} title="Could not load the workflow" />
      {w ? (
        <>
          {w.description ? <p>{w.description}</p> : null}
          <p className="muted small">
            <code>{w.id}</code> · deployed {dateTime(w.deployedAt)} · draft updated {dateTime(w.updatedAt)}
          </p>
          {deployed !== null ? (
            <p className="notice good" role="status">
              Deployed version {deployed}.
            </p>
          ) : null}
          <div className="card">
            <div className="card-head">
              <h2>{shown ? `Graph of version ${shown.version}` : 'Graph of the draft'}</h2>
              {shown ? (
                <button type="button" className="link" onClick={() => setShownVersion(null)}>
                  Show the draft
                </button>
              ) : null}
            </div>
            <WorkflowGraph definition={shown?.definition ?? w.definition} />
          </div>
          <div className="columns">
            <div className="card">
              <h2>Versions</h2>
              <ErrorNotice error={versions.error ?? rollback.error} />
              <table>
                <thead>
                  <tr>
                    <th>Version</th>
                    <th>Deployed at</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {[...(versions.data ?? [])].reverse().map((v) => (
                    <tr key={v.version} data-version={v.version}>
                      <td>
                        v{v.version}{' '}
                        {v.version === current ? <span className="badge good">deployed</span> : null}
                      </td>
                      <td>{dateTime(v.deployedAt)}</td>
                      <td className="actions">
                        <button type="button" className="link" onClick={() => setShownVersion(v.version)}>
                          Graph
                        </button>
                        {v.version !== current ? (
                          <button
                            type="button"
                            className="small"
                            disabled={rollback.isPending}
                            onClick={() => rollback.mutate(v.version)}
                          >
                            Roll back to v{v.version}
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {versions.data && !versions.data.length ? <p className="muted">Never deployed.</p> : null}
            </div>
            <div className="card">
              <h2>Run</h2>
              {current === null ? (
                <p className="muted">Deploy the workflow to run it.</p>
              ) : (
                <RunPanel
                  key={current}
                  workflowId={props.id}
                  inputSpecs={
                    (deployedDefinition ?? w.definition).inputs as Record<string, { type?: string }>
                  }
                />
              )}
            </div>
          </div>
          <div className="card">
            <h2>Deploy a new version</h2>
            <p className="muted">
              Paste a definition in JSON or YAML (or edit the draft below); it is saved as the draft and
              deployed as the next version.
            </p>
            {/* Remounted with each saved draft, so the box starts at its top. */}
            <DefinitionEditor key={w.updatedAt} value={editorText} onChange={setText} issues={issues} />
            <ErrorNotice error={deployError} title="Not deployed" />
            <button type="button" onClick={deploy} disabled={busy}>
              {busy ? 'Deploying…' : 'Save and deploy'}
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
