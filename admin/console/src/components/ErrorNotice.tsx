// A failed call as the admin plane explained it: its message and, on a 400, each issue at its path.
import { issuePath } from '../format.ts';
import { errorInfo } from '../trpc.ts';

export function ErrorNotice(props: { error: unknown; title?: string }) {
  if (!props.error) return null;
  const info = errorInfo(props.error);
  return (
    <div className="notice error" role="alert">
      <strong>{props.title ?? 'Error'}</strong>
      {info.status ? <span className="muted"> (HTTP {info.status})</span> : null}: {info.message}
      {info.details.length ? (
        <ul className="issues">
          {info.details.map((d, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: issues have no identity beyond their order
            <li key={i}>
              <code>{issuePath(d.path) || '(input)'}</code> {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
