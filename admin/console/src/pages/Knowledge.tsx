// Knowledge: the picked workspace's knowledge bases and, for the one picked, its documents with
// their processing status and failure reasons; a document can be processed again, enabled or
// disabled. Asks again every 2 seconds while a document is waiting or being processed.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { StatusBadge } from '../components/StatusBadge.tsx';
import { bytes, dateTime } from '../format.ts';
import { trpc } from '../trpc.ts';
import { useWorkspace } from '../workspace.tsx';

const PAGE = 50;

export function Knowledge() {
  const { workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const [picked, setPicked] = useState<string | null>(null);
  const [page, setPage] = useState(0);
  const bases = useQuery({
    queryKey: ['knowledge.list', workspace?.id],
    queryFn: () => trpc.knowledge.list.query({ workspaceId: workspace?.id as string }),
    enabled: !!workspace,
  });
  const baseId = bases.data?.some((b) => b.id === picked) ? picked : (bases.data?.[0]?.id ?? null);
  const base = bases.data?.find((b) => b.id === baseId);
  const documents = useQuery({
    queryKey: ['knowledge.documents', baseId, page],
    queryFn: () =>
      trpc.knowledge.documents.query({ knowledgeBaseId: baseId as string, limit: PAGE, offset: page * PAGE }),
    enabled: !!baseId,
    refetchInterval: (q) =>
      q.state.data?.documents.some(
        (d) => d.processingStatus === 'pending' || d.processingStatus === 'processing',
      )
        ? 2000
        : false,
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['knowledge.documents'] }),
      queryClient.invalidateQueries({ queryKey: ['knowledge.list'] }),
    ]);
  const reprocess = useMutation({
    mutationFn: (documentId: string) => trpc.knowledge.reprocessDocument.mutate({ documentId }),
    onSuccess: refresh,
  });
  // The switch moves at once (a controlled checkbox would spring back until the list is read
  // again); the answer, or the list read after a refusal, then stands.
  const [switching, setSwitching] = useState<Record<string, boolean>>({});
  const setEnabled = useMutation({
    mutationFn: (v: { documentId: string; enabled: boolean }) => trpc.knowledge.setDocumentEnabled.mutate(v),
    onSettled: async (_data, _err, v) => {
      await refresh();
      setSwitching(({ [v.documentId]: _, ...rest }) => rest);
    },
  });
  const total = documents.data?.total ?? 0;

  return (
    <section>
      <div className="page-head">
        <h1>Knowledge</h1>
        <span className="muted">{workspace ? `in ${workspace.name}` : ''}</span>
      </div>
      <ErrorNotice error={bases.error} title="Could not list knowledge bases" />
      <div className="columns wide-right">
        <div className="card flush">
          <table className="rows">
            <thead>
              <tr>
                <th>Knowledge base</th>
                <th className="num">Documents</th>
              </tr>
            </thead>
            <tbody>
              {(bases.data ?? []).map((b) => (
                <tr key={b.id} className={b.id === baseId ? 'selected' : 'clickable'} data-kb={b.name}>
                  <td>
                    <button
                      type="button"
                      className="link"
                      onClick={() => {
                        setPicked(b.id);
                        setPage(0);
                      }}
                    >
                      {b.name}
                    </button>
                    <div className="muted small">{b.embeddingModel}</div>
                  </td>
                  <td className="num">{b.docCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {bases.data && !bases.data.length ? (
            <p className="muted pad">No knowledge bases in this workspace.</p>
          ) : null}
        </div>
        <div className="card flush">
          {base ? (
            <div className="pad">
              <h2>{base.name}</h2>
              <p className="muted small">
                {base.description ? `${base.description} · ` : ''}chunks of up to{' '}
                {base.chunkingConfig.maxSize} tokens, overlap {base.chunkingConfig.overlap} ·{' '}
                {base.tokenCount.toLocaleString()} tokens
              </p>
            </div>
          ) : null}
          <ErrorNotice error={documents.error ?? reprocess.error ?? setEnabled.error} />
          {base ? (
            <table className="rows">
              <thead>
                <tr>
                  <th>Document</th>
                  <th>Status</th>
                  <th className="num">Chunks</th>
                  <th>Uploaded</th>
                  <th>Enabled</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {(documents.data?.documents ?? []).map((d) => (
                  <tr key={d.id} data-document={d.filename}>
                    <td>
                      {d.filename}
                      <div className="muted small">
                        {d.mimeType} · {bytes(d.fileSize)}
                      </div>
                    </td>
                    <td>
                      <StatusBadge status={d.processingStatus} />
                      {d.processingError ? <div className="error-text small">{d.processingError}</div> : null}
                    </td>
                    <td className="num">{d.chunkCount}</td>
                    <td>{dateTime(d.uploadedAt)}</td>
                    <td>
                      <label className="switch">
                        <input
                          type="checkbox"
                          checked={switching[d.id] ?? d.enabled}
                          onChange={(e) => {
                            const enabled = e.currentTarget.checked;
                            setSwitching((now) => ({ ...now, [d.id]: enabled }));
                            setEnabled.mutate({ documentId: d.id, enabled });
                          }}
                        />
                        <span>{(switching[d.id] ?? d.enabled) ? 'enabled' : 'disabled'}</span>
                      </label>
                    </td>
                    <td className="actions">
                      <button
                        type="button"
                        className="small"
                        disabled={reprocess.isPending || d.processingStatus === 'processing'}
                        onClick={() => reprocess.mutate(d.id)}
                      >
                        Re-process
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          {base && documents.data && !documents.data.documents.length ? (
            <p className="muted pad">
              No documents: upload them through the API,{' '}
              <code>POST /api/v1/knowledge/{base.id}/documents</code>.
            </p>
          ) : null}
          {total > PAGE ? (
            <div className="pad actions">
              <button type="button" className="small" disabled={page === 0} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span className="muted">
                {page * PAGE + 1}–{Math.min(total, (page + 1) * PAGE)} of {total}
              </span>
              <button
                type="button"
                className="small"
                disabled={(page + 1) * PAGE >= total}
                onClick={() => setPage(page + 1)}
              >
                Next
              </button>
            </div>
          ) : null}
        </div>
      </div>
    </section>
  );
}
