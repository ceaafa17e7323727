// Workflows of the picked workspace with the version each runs and the folder each sits in (moved
// with the select in its row); a new one is made on its own page.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { dateTime } from '../format.ts';
import { Link } from '../router.tsx';
import { trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

export function Workflows() {
  const { workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const workflows = useQuery({
    queryKey: ['workflows.list', workspace?.id],
    queryFn: () => trpc.workflows.list.query({ workspaceId: workspace?.id as string }),
    enabled: !!workspace,
  });
  const folders = useQuery({
    queryKey: ['folders.list', workspace?.id, 'workflow'],
    queryFn: () => trpc.folders.list.query({ workspaceId: workspace?.id as string, kind: 'workflow' }),
    enabled: !!workspace,
  });
  const move = useMutation({
    mutationFn: (to: { id: string; folderId: string | null }) => trpc.workflows.update.mutate(to),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['workflows.list'] }),
  });
  return (
    <section>
      <div className="page-head">
        <h1>Workflows</h1>
        <span className="muted">{workspace ? `in ${workspace.name}` : ''}</span>
        <Link to="/workflows/new" className="button">
          New workflow
        </Link>
      </div>
      <ErrorNotice error={workflows.error} title="Could not list workflows" />
      <ErrorNotice error={folders.error ?? move.error} title="Could not list or move to folders" />
      <div className="card flush">
        <table className="rows">
          <thead>
            <tr>
              <th>Name</th>
              <th>Folder</th>
              <th>Deployed</th>
              <th>Deployed at</th>
              <th className="num">Blocks</th>
              <th>Draft updated</th>
            </tr>
          </thead>
          <tbody>
            {(workflows.data ?? []).map((w) => (
              <tr key={w.id} data-workflow={w.id}>
                <td>
                  <Link to={`/workflows/${w.id}`}>{w.name}</Link>
                  {w.description ? <div className="muted small">{w.description}</div> : null}
                </td>
                <td>
                  <select
                    aria-label={`Folder of ${w.name}`}
                    value={w.folderId ?? ''}
                    disabled={move.isPending}
                    onChange={(e) => move.mutate({ id: w.id, folderId: e.target.value || null })}
                  >
                    <option value="">(top)</option>
                    {(folders.data ?? []).map((f) => (
                      <option key={f.id} value={f.id}>
                        {f.name}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  {w.deployedVersion === null ? (
                    <StatusBadge status="draft" />
                  ) : (
                    <span className="badge good">version {w.deployedVersion}</span>
                  )}
                </td>
                <td>{dateTime(w.deployedAt)}</td>
                <td className="num">{w.definition.blocks.length}</td>
                <td>{dateTime(w.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {workflows.data && !workflows.data.length ? (
          <p className="muted pad">
            No workflows in this workspace. <Link to="/workflows/new">Deploy one</Link> from a JSON or YAML
            definition.
          </p>
        ) : null}
      </div>
    </section>
  );
}
