// An approval link's page (jobs/approval-links.ts), for a person without an API key: GET
// /approve/{executionId}/{contextId}?expires=…&signature=… shows the approval's message and a form for
// its fields with Approve / Reject; the form POSTs (form-encoded: the fields and `approved=true|false`)
// to the same link, which resumes the execution (jobs/resume-execution.ts, exactly once). A forged,
// expired, used or unknown link answers a 4xx page and changes nothing. HTML pages, not API
// operations: outside /api and the OpenAPI document.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { getExecution } from '../../../db/executions.ts';
import { ServiceError } from '../../../errors.ts';
import { APPROVAL_PAGE_PATH, approvalLinks } from '../../../jobs/approval-links.ts';
import { executionResumer } from '../../../jobs/resume-execution.ts';
import type { ApiDeps, ApiEnv } from '../../context.ts';
import { answeredPage, approvalForm, PAGE_HEADERS, refusalPage } from './link-page.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LINK_ACTOR = { userId: null, name: 'approval link' } as const;

export function approvalLinkRoutes(deps: ApiDeps) {
  const { db, clock } = deps;
  const links = approvalLinks(deps.config);
  const resume = executionResumer({ ...deps, now: clock });
  const app = new Hono<ApiEnv>();
  const html = (body: string, status: ContentfulStatusCode) =>
    new Response(body, { status, headers: { 'Content-Type': 'text/html; charset=utf-8', ...PAGE_HEADERS } });
  const refuse = (status: ContentfulStatusCode, title: string, text: string) =>
    html(refusalPage(title, text), status);

  /** The link's paused execution, or the page refusing it. */
  async function open(executionId: string, contextId: string, query: Record<string, string>) {
    if (!UUID.test(executionId) || !UUID.test(contextId))
      return refuse(404, 'Link not found', 'This approval link does not exist.');
    const verdict = links.check(executionId, contextId, query.expires ?? '', query.signature ?? '', clock());
    if (verdict === 'forged') return refuse(403, 'Invalid link', 'This approval link is not valid.');
    if (verdict === 'expired') return refuse(410, 'Link expired', 'This approval link has expired.');
    const row = await getExecution(db, executionId);
    if (!row) return refuse(404, 'Link not found', 'This approval link does not exist.');
    if (row.status !== 'paused' || !row.pause || row.pause.contextId !== contextId)
      return refuse(
        409,
        'Already answered',
        'This approval is no longer waiting for an answer (answered, timed out or cancelled).',
      );
    return { row, pause: row.pause };
  }

  const path = `${APPROVAL_PAGE_PATH}/:executionId/:contextId`;
  app.get(path, async (c) => {
    const opened = await open(c.req.param('executionId'), c.req.param('contextId'), c.req.query());
    if (opened instanceof Response) return opened;
    return html(approvalForm(opened.pause, c.req.url.slice(c.req.url.indexOf(APPROVAL_PAGE_PATH))), 200);
  });

  app.post(
    path,
    bodyLimit({ maxSize: 64 * 1024, onError: () => refuse(413, 'Too large', 'The answer is too large.') }),
    async (c) => {
      const opened = await open(c.req.param('executionId'), c.req.param('contextId'), c.req.query());
      if (opened instanceof Response) return opened;
      const { row, pause } = opened;
      const action = c.req.url.slice(c.req.url.indexOf(APPROVAL_PAGE_PATH));
      const type = c.req.header('content-type') ?? '';
      if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
        return html(approvalForm(pause, action, 'Send the form.'), 415);
      const form = await c.req.parseBody();
      const approved = form.approved;
      if (approved !== 'true' && approved !== 'false')
        return html(approvalForm(pause, action, 'Choose Approve or Reject.'), 400);
      const data: Record<string, unknown> = {};
      for (const [name, spec] of Object.entries(pause.fields)) {
        const raw = form[name];
        if (typeof raw !== 'string') {
          if (spec.type === 'boolean') data[name] = false;
          continue;
        }
        if (raw === '' && spec.type !== 'string') continue;
        if (spec.type === 'number') {
          const n = Number(raw);
          if (!Number.isFinite(n)) return html(approvalForm(pause, action, `${name}: enter a number.`), 400);
          data[name] = n;
        } else if (spec.type === 'boolean') data[name] = raw === 'true' || raw === 'on';
        else if (spec.type === 'string') {
          if (raw !== '' || spec.required) data[name] = raw;
        } else {
          try {
            data[name] = JSON.parse(raw);
          } catch {
            return html(approvalForm(pause, action, `${name}: enter JSON.`), 400);
          }
        }
      }
      try {
        await resume({
          workflowId: row.workflow_id,
          executionId: row.id,
          contextId: pause.contextId,
          approved: approved === 'true',
          data,
          actor: LINK_ACTOR,
          by: 'link',
        });
      } catch (err) {
        if (!(err instanceof ServiceError) || err.status >= 500) throw err;
        if (err.status === 409)
          return refuse(409, 'Already answered', 'This approval is no longer waiting for an answer.');
        const why =
          (err.details ?? []).map((d) => `${d.path.at(-1)}: ${d.message}`).join('; ') || err.message;
        return html(approvalForm(pause, action, why), err.status as ContentfulStatusCode);
      }
      return html(answeredPage(approved === 'true'), 200);
    },
  );
  return app;
}
