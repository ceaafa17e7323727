// API keys: made for the picked workspace or for a user (the plain key is shown once, with a copy
// button), listed masked, revoked with a second click to confirm. The list shows by default the keys
// of the picked workspace's organization: its workspaces' keys and its members' personal keys. A
// personal key belongs to a user, not to a workspace, so listing by workspace left out every one of
// them, the bootstrap key included. A key may be limited to scopes (none ticked: its full reach).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { SCOPES } from '../../../../db/key-scopes.ts';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { dateTime } from '../format.ts';
import { type Outputs, trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

type CreatedKey = Outputs['keys']['create'];
type Key = Outputs['keys']['list'][number];

export function Keys() {
  const { organization, workspaces } = useWorkspace();
  const queryClient = useQueryClient();
  const [scope, setScope] = useState<'organization' | 'all'>('organization');
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const users = useQuery({ queryKey: ['users.list'], queryFn: () => trpc.users.list.query() });
  const all = useQuery({ queryKey: ['keys.list', {}], queryFn: () => trpc.keys.list.query({}) });
  const members = useQuery({
    queryKey: ['members.list', organization?.id],
    queryFn: () => trpc.members.list.query({ orgId: organization?.id as string }),
    enabled: !!organization,
  });
  const ofOrganization = (k: Key) =>
    k.type === 'workspace'
      ? workspaces.some((w) => w.id === k.workspaceId && w.organizationId === organization?.id)
      : (members.data ?? []).some((m) => m.userId === k.userId && !m.departedAt);
  const byOrganization = scope === 'organization' && organization;
  const keys = {
    data: byOrganization ? (members.data ? all.data?.filter(ofOrganization) : undefined) : all.data,
    error: all.error ?? (byOrganization ? members.error : null),
  };
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['keys.list'] });
  const revoke = useMutation({
    mutationFn: (id: string) => trpc.keys.revoke.mutate({ id }),
    onSuccess: refresh,
  });
  const [confirming, setConfirming] = useState<string | null>(null);
  const userNames = new Map((users.data ?? []).map((u) => [u.id, u.email]));
  const workspaceNames = new Map(workspaces.map((w) => [w.id, w.name]));

  return (
    <section>
      <div className="page-head">
        <h1>API keys</h1>
      </div>
      {created ? <CreatedKeyNotice created={created} onDone={() => setCreated(null)} /> : null}
      <CreateKeyForm
        onCreated={(k) => {
          setCreated(k);
          refresh();
        }}
        users={users.data ?? []}
      />
      <div className="card flush">
        <div className="card-head pad">
          <h2>Keys</h2>
          <fieldset className="segmented" aria-label="Which keys">
            <button
              type="button"
              className={scope === 'organization' ? 'on' : ''}
              onClick={() => setScope('organization')}
              disabled={!organization}
            >
              {organization ? `Organization ${organization.name}` : 'Organization'}
            </button>
            <button type="button" className={scope === 'all' ? 'on' : ''} onClick={() => setScope('all')}>
              All
            </button>
          </fieldset>
        </div>
        <ErrorNotice error={keys.error ?? revoke.error} />
        <table className="rows">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Type</th>
              <th>Acts for</th>
              <th>Scopes</th>
              <th>Created</th>
              <th>Last used</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((k) => (
              <tr key={k.id} data-key={k.id}>
                <td>{k.name}</td>
                <td className="nowrap">
                  <code>{k.maskedKey}</code>
                </td>
                <td>{k.type}</td>
                <td>
                  {k.type === 'workspace'
                    ? (workspaceNames.get(k.workspaceId ?? '') ?? k.workspaceId)
                    : (userNames.get(k.userId ?? '') ?? k.userId)}
                </td>
                <td className="key-scopes">{k.scopes.length ? k.scopes.join(', ') : 'all (unlimited)'}</td>
                <td className="nowrap">{dateTime(k.createdAt)}</td>
                <td className="nowrap">{dateTime(k.lastUsedAt)}</td>
                <td>
                  {k.revokedAt ? (
                    <StatusBadge status="revoked" />
                  ) : (
                    <span className="badge good">active</span>
                  )}
                </td>
                <td className="actions">
                  {k.revokedAt ? null : confirming === k.id ? (
                    <>
                      <button
                        type="button"
                        className="danger small"
                        onClick={() => revoke.mutate(k.id, { onSettled: () => setConfirming(null) })}
                      >
                        Confirm revoke
                      </button>
                      <button type="button" className="link" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </>
                  ) : (
                    <button type="button" className="small" onClick={() => setConfirming(k.id)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {keys.data && !keys.data.length ? (
          <p className="muted pad">No keys{byOrganization ? ' in this organization' : ''}.</p>
        ) : null}
      </div>
    </section>
  );
}

function CreateKeyForm(props: { onCreated: (key: CreatedKey) => void; users: Outputs['users']['list'] }) {
  const { workspace } = useWorkspace();
  const [name, setName] = useState('');
  const [type, setType] = useState<'workspace' | 'personal'>('workspace');
  const [userId, setUserId] = useState('');
  const [scopes, setScopes] = useState<(typeof SCOPES)[number][]>([]);
  const create = useMutation({
    mutationFn: () =>
      type === 'workspace'
        ? trpc.keys.create.mutate({ type, workspaceId: workspace?.id ?? '', name, scopes })
        : trpc.keys.create.mutate({ type, userId, name, scopes }),
    onSuccess: (key) => {
      setName('');
      setScopes([]);
      props.onCreated(key);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form className="card" onSubmit={submit}>
      <h2>Create a key</h2>
      <div className="form-row">
        <label>
          Name
          <input
            name="keyName"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            maxLength={100}
          />
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => setType(e.currentTarget.value as 'workspace' | 'personal')}>
            <option value="workspace">workspace key ({workspace?.name ?? 'no workspace'})</option>
            <option value="personal">personal key of a user</option>
          </select>
        </label>
        {type === 'personal' ? (
          <label>
            User
            <select value={userId} onChange={(e) => setUserId(e.currentTarget.value)}>
              <option value="">choose…</option>
              {props.users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.name} ({u.email})
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </div>
      <fieldset className="scopes" aria-label="Scopes">
        <legend>Scopes (none ticked: the key's full reach)</legend>
        {SCOPES.map((s) => (
          <label key={s} className="check">
            <input
              type="checkbox"
              name="scope"
              value={s}
              checked={scopes.includes(s)}
              onChange={(e) =>
                setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))
              }
            />
            {s}
          </label>
        ))}
      </fieldset>
      <div className="form-row">
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </div>
      <ErrorNotice error={create.error} title="Not created" />
    </form>
  );
}

function CreatedKeyNotice(props: { created: CreatedKey; onDone: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.created.key);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="card created-key" role="status">
      <h2>Key “{props.created.name}” created</h2>
      <p>
        <strong>Copy it now: it is not shown again.</strong> Only a hash and a sealed copy are stored.
      </p>
      <div className="key-line">
        <input
          readOnly
          value={props.created.key}
          aria-label="New API key"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="link" onClick={props.onDone}>
          Done
        </button>
      </div>
      {copied === 'failed' ? (
        <p className="muted">The browser would not copy it: select the key and copy it yourself.</p>
      ) : null}
    </div>
  );
}
