// A bar of how much of a limit is used: green, amber past 80 %, red at the limit.
export function Meter(props: {
  label: string;
  used: number;
  limit: number | null;
  format: (n: number) => string;
}) {
  const { used, limit } = props;
  const share = limit && limit > 0 ? Math.min(1, used / limit) : 0;
  const tone = limit === null ? 'good' : share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : 'good';
  return (
    <div className="meter" data-meter={props.label}>
      <div className="meter-label">
        <span>{props.label}</span>
        <span>
          {props.format(used)} {limit === null ? '(no limit)' : `of ${props.format(limit)}`}
          {limit ? <span className="muted"> · {Math.round((used / limit) * 100)} %</span> : null}
        </span>
      </div>
      <div className="meter-track">
        <div className={`meter-fill ${tone}`} style={{ width: `${share * 100}%` }} />
      </div>
    </div>
  );
}
