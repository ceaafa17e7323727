// A value shown as indented JSON, or a dash when there is none.
export function JsonView(props: { value: unknown; empty?: string }) {
  if (props.value === undefined || props.value === null) return <p className="muted">{props.empty ?? '–'}</p>;
  return <pre className="json">{JSON.stringify(props.value, null, 2)}</pre>;
}
