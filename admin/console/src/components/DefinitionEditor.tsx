// The box a definition is pasted into (JSON or YAML), with line numbers; lines with a problem are
// marked in the margin, and the problems are listed under it at their paths: a click selects the line.
import { useRef } from 'react';
import type { TextIssue } from '../definition-text.ts';
import { issuePath } from '../format.ts';

export function DefinitionEditor(props: {
  value: string;
  onChange: (text: string) => void;
  issues: TextIssue[];
  label?: string;
  rows?: number;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = props.value.split('\n').length;
  const bad = new Set(props.issues.map((i) => i.line).filter((l): l is number => l !== undefined));

  const selectLine = (line: number) => {
    const el = area.current;
    if (!el) return;
    const lines = props.value.split('\n');
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    // About where the line is: the browser scrolls a selection into view only on some platforms.
    el.scrollTop = Math.max(0, (line - 4) * 20);
  };

  return (
    <div className="editor-wrap">
      <div className="editor">
        <div className="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a line's number is what it is
            <div key={i} className={bad.has(i + 1) ? 'bad' : ''}>
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          ref={area}
          aria-label={props.label ?? 'Workflow definition (JSON or YAML)'}
          spellCheck={false}
          wrap="off"
          rows={props.rows ?? 18}
          value={props.value}
          onChange={(e) => props.onChange(e.currentTarget.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {props.issues.length ? (
        <p className="notice error" role="alert">
          {props.issues.length === 1 ? '1 problem' : `${props.issues.length} problems`} in the definition:
          nothing was saved.
        </p>
      ) : null}
      {props.issues.length ? (
        <ul className="issues definition-issues" aria-label="Problems in the definition">
          {props.issues.map((i, n) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: issues have no identity beyond their order
            <li key={n}>
              {i.line !== undefined ? (
                <button type="button" className="link" onClick={() => selectLine(i.line as number)}>
                  line {i.line}
                </button>
              ) : null}{' '}
              {i.path.length ? <code className="issue-path">{issuePath(i.path)}</code> : null} {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
