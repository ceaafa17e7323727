// The HTML of an approval link's page (api/routes/resume/link-routes.ts): the message, a form for the
// approval's fields, Approve / Reject; and the pages that say why a link does nothing. Every value
// shown is escaped; the page loads nothing and runs no script.
import type { StoredPause } from '../../../db/executions.ts';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** Forbids anything but the inline style and a form posting back to this service. */
export const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}input,textarea{width:100%;padding:.4rem;box-sizing:border-box}
input[type=checkbox]{width:auto}.buttons{margin-top:1.2rem;display:flex;gap:.8rem}button{padding:.5rem 1.4rem;font-size:1rem}
.message{white-space:pre-wrap;background:#f4f4f4;padding:1rem;border-radius:4px}small{color:#666}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function fieldInput(name: string, spec: StoredPause['fields'][string]): string {
  const id = `f-${escapeHtml(name)}`;
  const label = `<label for="${id}">${escapeHtml(name)}${spec.required ? ' *' : ''}</label>`;
  const hint = spec.description ? `<small>${escapeHtml(spec.description)}</small>` : '';
  const value =
    spec.default === undefined
      ? ''
      : typeof spec.default === 'string'
        ? spec.default
        : JSON.stringify(spec.default);
  if (spec.type === 'boolean')
    return `${label}<input type="checkbox" id="${id}" name="${escapeHtml(name)}" value="true"${spec.default === true ? ' checked' : ''}>${hint}`;
  if (spec.type === 'object' || spec.type === 'array' || spec.type === 'any')
    return `${label}<textarea id="${id}" name="${escapeHtml(name)}" rows="3" placeholder="JSON">${escapeHtml(value)}</textarea>${hint}`;
  const type = spec.type === 'number' ? 'number" step="any' : 'text';
  return `${label}<input type="${type}" id="${id}" name="${escapeHtml(name)}" value="${escapeHtml(value)}">${hint}`;
}

/** The form: the message, one input per field, Approve and Reject posting back to the same link. */
export function approvalForm(pause: StoredPause, action: string, error?: string): string {
  const fields = Object.entries(pause.fields)
    .map(([n, s]) => fieldInput(n, s))
    .join('\n');
  return page(
    'Approval requested',
    `<p class="message">${escapeHtml(pause.message)}</p>
${error ? `<p role="alert"><strong>${escapeHtml(error)}</strong></p>` : ''}
<form method="post" action="${escapeHtml(action)}">${fields}
<div class="buttons"><button type="submit" name="approved" value="true">Approve</button>
<button type="submit" name="approved" value="false">Reject</button></div></form>
${pause.expiresAt ? `<p><small>Without an answer, the workflow goes on without approval at ${escapeHtml(pause.expiresAt)}.</small></p>` : ''}`,
  );
}

/** The page after an answer was recorded. */
export function answeredPage(approved: boolean): string {
  return page(
    approved ? 'Approved' : 'Rejected',
    `<p>Your answer was recorded: the workflow goes on. You can close this page.</p>`,
  );
}

/** A page saying why the link does nothing (used, expired, forged, unknown). */
export function refusalPage(title: string, text: string): string {
  return page(title, `<p>${escapeHtml(text)}</p><p><small>Nothing was changed.</small></p>`);
}
