// A status as a coloured word: executions, documents, spans and deployments share the palette.
const TONES: Record<string, string> = {
  completed: 'good',
  success: 'good',
  enabled: 'good',
  deployed: 'good',
  failed: 'bad',
  cancelled: 'off',
  error: 'bad',
  revoked: 'bad',
  processing: 'busy',
  queued: 'wait',
  paused: 'wait',
  pending: 'wait',
  disabled: 'off',
  draft: 'off',
};

export function StatusBadge(props: { status: string }) {
  return <span className={`badge ${TONES[props.status] ?? 'off'}`}>{props.status}</span>;
}
