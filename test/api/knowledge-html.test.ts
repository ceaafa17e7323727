// HTML documents through upload, ingestion (in the runner's worker threads) and search: a page that
// is an article is indexed as its article (title first), without its navigation, header and footer;
// a page without an article keeps all its text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { expectOk } from './files-helpers.ts';
import { createKnowledgeBase, ingest } from './knowledge-helpers.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

/** Site chrome in words found nowhere else, so its absence is telling. */
const NAV = `<nav><ul><li><a href="/">Zanzibar home</a></li><li><a href="/shop">Quokka shop</a></li>
  <li><a href="/about">Marmalade team</a></li><li><a href="/login">Sign in</a></li></ul></nav>`;
const HEADER = '<header><div class="banner">Free shipping on all Quokka orders</div></header>';
const FOOTER = '<footer><p>Copyright Zanzibar Bakery. Privacy policy. Terms of service.</p></footer>';

const ARTICLE = `<main><article><h1>Baking sourdough at home</h1>
  <p>Sourdough bread is leavened by a culture of wild yeast and lactic acid bacteria. The starter is fed
  with flour and water every day, and after about a week it is strong enough to raise a loaf.</p>
  <p>To bake, mix the levain with flour, water and salt, fold the dough every half hour for two hours,
  then shape it and let it rise overnight in the refrigerator, where the flavour deepens.</p>
  <p>Bake the loaf in a covered cast iron pot in a very hot oven for twenty minutes, then uncover it and
  bake until the crust is deep brown. Let it cool for an hour before cutting it open.</p>
  </article></main>`;

const page = (body: string) =>
  `<!doctype html><html><head><title>Baking sourdough at home</title></head><body>${body}</body></html>`;

async function chunksOf(documentId: string): Promise<string[]> {
  const rows = await svc.db.query<{ content: string }>(
    `select c.content from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
      where c.document_id = $1 and c.generation = d.live_generation order by c.chunk_index`,
    [documentId],
  );
  return rows.map((r) => r.content);
}

describe('HTML documents', () => {
  it('index the article of a page: its first chunk is the article, the navigation is not indexed', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'sourdough.html',
      type: 'text/html',
      content: page(`${HEADER}${NAV}${ARTICLE}${FOOTER}`),
    });
    expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
    const chunks = await chunksOf(doc.id);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0]).toMatch(/^Baking sourdough at home\n+Sourdough bread is leavened/);
    const all = chunks.join('\n');
    expect(all).toContain('Let it cool for an hour before cutting it open.');
    for (const chrome of ['Zanzibar', 'Quokka', 'Marmalade', 'Sign in', 'Privacy policy']) {
      expect(all).not.toContain(chrome);
    }
    // Search by the navigation's words finds nothing of it.
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: {
        workspaceId,
        knowledgeBaseIds: [kb.id],
        query: 'Zanzibar Quokka Marmalade',
        searchMode: 'hybrid',
      },
    });
    expectOk(res);
    for (const r of res.body.data.results) expect(r.content).not.toMatch(/Zanzibar|Quokka|Marmalade/);
  });

  it('keep all the text of a page without an article', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'prices.html',
      type: 'text/html',
      content: page(
        `${NAV}<h2>Price list</h2><table><tr><th>Loaf</th><th>Price</th></tr>
         <tr><td>Sourdough</td><td>6</td></tr><tr><td>Rye</td><td>5</td></tr></table>${FOOTER}`,
      ),
    });
    expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
    const all = (await chunksOf(doc.id)).join('\n');
    for (const text of ['Zanzibar home', 'Quokka shop', 'Price list', 'Sourdough', 'Rye', 'Privacy policy']) {
      expect(all).toContain(text);
    }
  });
});
