// The workspace the console looks at: picked in the header from every organization's workspaces,
// kept in session storage, and read by the pages that list a workspace's things.
import { useQuery } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useState } from 'react';
import { type Outputs, trpc } from './trpc.ts';

export type Workspace = Outputs['workspaces']['list'][number];
export type Organization = Outputs['orgs']['list'][number];

const WORKSPACE_KEY = 'wfs-admin:workspace';

interface WorkspaceState {
  workspace: Workspace | null;
  organization: Organization | null;
  workspaces: Workspace[];
  organizations: Organization[];
  loading: boolean;
  error: unknown;
  select(id: string): void;
}

const WorkspaceContext = createContext<WorkspaceState | null>(null);

export function WorkspaceProvider(props: { children: ReactNode }) {
  const [chosen, setChosen] = useState(() => sessionStorage.getItem(WORKSPACE_KEY));
  const orgs = useQuery({ queryKey: ['orgs.list'], queryFn: () => trpc.orgs.list.query() });
  const workspaces = useQuery({ queryKey: ['workspaces.list'], queryFn: () => trpc.workspaces.list.query() });
  const all = (workspaces.data ?? []).filter((w) => !w.archivedAt);
  // A stored choice that no longer exists falls back to the first workspace.
  const workspace = all.find((w) => w.id === chosen) ?? all[0] ?? null;
  const organization = orgs.data?.find((o) => o.id === workspace?.organizationId) ?? null;
  const state: WorkspaceState = {
    workspace,
    organization,
    workspaces: all,
    organizations: orgs.data ?? [],
    loading: orgs.isPending || workspaces.isPending,
    error: orgs.error ?? workspaces.error,
    select(id) {
      sessionStorage.setItem(WORKSPACE_KEY, id);
      setChosen(id);
    },
  };
  return <WorkspaceContext.Provider value={state}>{props.children}</WorkspaceContext.Provider>;
}

export function useWorkspace(): WorkspaceState {
  const state = useContext(WorkspaceContext);
  if (!state) throw new Error('useWorkspace outside WorkspaceProvider');
  return state;
}

/** The header's picker: workspaces grouped by organization. */
export function WorkspacePicker() {
  const { workspace, workspaces, organizations, select, loading } = useWorkspace();
  if (loading) return <span className="muted">Loading workspaces…</span>;
  if (!workspaces.length) return <span className="muted">No workspaces</span>;
  return (
    <label className="picker">
      <span>Workspace</span>
      <select
        aria-label="Workspace"
        value={workspace?.id ?? ''}
        onChange={(e) => select(e.currentTarget.value)}
      >
        {organizations.map((org) => {
          const mine = workspaces.filter((w) => w.organizationId === org.id);
          return mine.length ? (
            <optgroup key={org.id} label={org.name}>
              {mine.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </optgroup>
          ) : null;
        })}
      </select>
    </label>
  );
}
