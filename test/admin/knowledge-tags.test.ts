// Admin plane: typed tags of knowledge bases (knowledge.defineTag: slots by type, limits, names,
// races) and of their documents (knowledge.setDocumentTags: typed values, clearing, partial
// updates), each recorded in the audit log as the admin plane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnowledgeBase, uploadDocument } from '../api/knowledge-helpers.ts';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

const NOWHERE = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

const newBase = () => createKnowledgeBase(svc, tenant.workspace.id);
const define = (knowledgeBaseId: string, name: string, type: 'text' | 'number' | 'date' | 'boolean') =>
  svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId, name, type });

async function audits(resourceId: string) {
  return svc.db.query<{ action: string; actor_name: string; resource_type: string; metadata: unknown }>(
    `select action, actor_name, resource_type, metadata from audit_logs
      where resource_id = $1 and action like 'knowledge.%tag%' order by created_at, id`,
    [resourceId],
  );
}

/** A document of a knowledge base; it need not be processed to carry tags. */
async function newDocument(knowledgeBaseId: string): Promise<string> {
  const name = `doc-${Math.random().toString(36).slice(2)}.txt`;
  // Content of its own: a knowledge base refuses the same content twice.
  const res = await uploadDocument(svc, tenant.key, knowledgeBaseId, {
    workspaceId: tenant.workspace.id,
    name,
    content: `Notes of ${name}.`,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.document.id;
}

describe('knowledge.defineTag', () => {
  it('gives each tag the first free slot of its type, and records it', async () => {
    const kb = await newBase();
    expect(await define(kb.id, '  Author ', 'text')).toEqual({ name: 'Author', type: 'text', slot: 'text1' });
    expect(await define(kb.id, 'pages', 'number')).toEqual({
      name: 'pages',
      type: 'number',
      slot: 'number1',
    });
    expect(await define(kb.id, 'title', 'text')).toEqual({ name: 'title', type: 'text', slot: 'text2' });
    expect(await define(kb.id, 'published', 'date')).toEqual({
      name: 'published',
      type: 'date',
      slot: 'date1',
    });
    expect(await define(kb.id, 'draft', 'boolean')).toEqual({
      name: 'draft',
      type: 'boolean',
      slot: 'boolean1',
    });
    const got = await svc.admin.knowledge.get.query({ id: kb.id });
    expect(got.tags).toEqual([
      { name: 'Author', type: 'text', slot: 'text1' },
      { name: 'pages', type: 'number', slot: 'number1' },
      { name: 'title', type: 'text', slot: 'text2' },
      { name: 'published', type: 'date', slot: 'date1' },
      { name: 'draft', type: 'boolean', slot: 'boolean1' },
    ]);
    const entries = await audits(kb.id);
    expect(entries).toHaveLength(5);
    expect(entries[0]).toEqual({
      action: 'knowledge.tag_defined',
      actor_name: 'admin plane',
      resource_type: 'knowledge_base',
      metadata: { name: 'Author', type: 'text', slot: 'text1' },
    });
  });

  it('holds at most 7 text, 5 number, 2 date and 3 boolean tags', async () => {
    const kb = await newBase();
    const limits = { text: 7, number: 5, date: 2, boolean: 3 } as const;
    for (const [type, n] of Object.entries(limits) as [keyof typeof limits, number][]) {
      for (let i = 1; i <= n; i++) {
        expect((await define(kb.id, `${type} ${i}`, type)).slot).toBe(`${type}${i}`);
      }
      const full = await adminError(define(kb.id, `${type} extra`, type));
      expect(full).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
      expect(full.details?.[0]?.message).toBe(`A knowledge base holds at most ${n} ${type} tags`);
    }
  });

  it('refuses a second tag of one name with CONFLICT, whatever its type', async () => {
    const kb = await newBase();
    await define(kb.id, 'owner', 'text');
    expect(await adminError(define(kb.id, 'owner', 'number'))).toMatchObject({
      code: 'CONFLICT',
      httpStatus: 409,
    });
    expect(await adminError(define(kb.id, ' owner ', 'text'))).toMatchObject({ code: 'CONFLICT' });
    // Another knowledge base has names of its own.
    const second = await newBase();
    expect(await define(second.id, 'owner', 'number')).toEqual({
      name: 'owner',
      type: 'number',
      slot: 'number1',
    });
  });

  it('refuses empty, long and control-character names, and unknown knowledge bases', async () => {
    const kb = await newBase();
    for (const name of ['', '   ', 'x'.repeat(101), 'tab\there', 'line\nbreak', 'nul\u0000']) {
      expect(await adminError(define(kb.id, name, 'text'))).toMatchObject({
        code: 'BAD_REQUEST',
        httpStatus: 400,
      });
    }
    expect((await define(kb.id, 'x'.repeat(100), 'text')).slot).toBe('text1');
    expect(await adminError(define(NOWHERE, 'a', 'text'))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
    });
  });

  it('gives racing definitions distinct slots, and one name to one of them', async () => {
    const kb = await newBase();
    const racing = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) => define(kb.id, `t${i}`, 'text')),
    );
    const slots = racing.flatMap((r) => (r.status === 'fulfilled' ? [r.value.slot] : []));
    expect(slots.sort()).toEqual(['text1', 'text2', 'text3', 'text4', 'text5', 'text6', 'text7']);
    expect(racing.filter((r) => r.status === 'rejected')).toHaveLength(2);

    const same = await Promise.allSettled(Array.from({ length: 4 }, () => define(kb.id, 'n', 'number')));
    expect(same.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of same) {
      if (r.status === 'rejected')
        expect(await adminError(Promise.reject(r.reason))).toMatchObject({ code: 'CONFLICT' });
    }
  });
});

describe('knowledge.setDocumentTags', () => {
  let kb: { id: string };

  beforeAll(async () => {
    kb = await newBase();
    await define(kb.id, 'author', 'text');
    await define(kb.id, 'pages', 'number');
    await define(kb.id, 'published', 'date');
    await define(kb.id, 'draft', 'boolean');
  });

  const set = (documentId: string, tags: Record<string, string | number | boolean | null>) =>
    svc.admin.knowledge.setDocumentTags.mutate({ documentId, tags });

  it('sets typed values by tag name and answers all of the document values', async () => {
    const doc = await newDocument(kb.id);
    expect(
      await set(doc, { author: 'Ada', pages: 12.5, published: '2024-02-29T10:30:00+02:00', draft: false }),
    ).toEqual({ author: 'Ada', pages: 12.5, published: '2024-02-29T08:30:00.000Z', draft: false });
    // Only the named tags change; null clears one.
    expect(await set(doc, { pages: -3, author: null })).toEqual({
      pages: -3,
      published: '2024-02-29T08:30:00.000Z',
      draft: false,
    });
    expect(await set(doc, { published: '2024-03-01' })).toEqual({
      pages: -3,
      published: '2024-03-01T00:00:00.000Z',
      draft: false,
    });
    expect(await set(doc, {})).toEqual({ pages: -3, published: '2024-03-01T00:00:00.000Z', draft: false });
    const entries = await audits(doc);
    expect(entries.map((e) => [e.action, e.resource_type])).toEqual(
      Array.from({ length: 4 }, () => ['knowledge.document_tags_set', 'knowledge_document']),
    );
    expect(entries[1]?.metadata).toEqual({ tags: ['pages', 'author'] });
  });

  it('keeps a text value of 1,000 characters and large or tiny numbers exactly', async () => {
    const doc = await newDocument(kb.id);
    const long = 'é'.repeat(1000);
    expect(await set(doc, { author: long, pages: 1e300 })).toMatchObject({ author: long, pages: 1e300 });
    expect(await set(doc, { pages: 0.1 + 0.2 })).toMatchObject({ pages: 0.1 + 0.2 });
    expect(await set(doc, { pages: -5e-324 })).toMatchObject({ pages: -5e-324 });
  });

  it('refuses unknown tags and values of the wrong type, naming each tag, and changes nothing', async () => {
    const doc = await newDocument(kb.id);
    await set(doc, { author: 'Grace', pages: 1 });
    const bad = await adminError(
      set(doc, { author: 'Linus', colour: 'red', pages: '12', published: '2024-02-30', draft: 'yes' }),
    );
    expect(bad).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(bad.details?.map((d) => d.path)).toEqual([
      ['tags', 'colour'],
      ['tags', 'pages'],
      ['tags', 'published'],
      ['tags', 'draft'],
    ]);
    const wrong: Record<string, string | number | boolean>[] = [
      { author: 5 },
      { author: 'x'.repeat(1001) },
      { pages: true },
      { published: 20240101 },
      { published: 'yesterday' },
      { draft: 1 },
    ];
    for (const tags of wrong) {
      const err = await adminError(set(doc, tags));
      expect(err.details?.[0]?.path).toEqual(['tags', Object.keys(tags)[0]]);
    }
    expect(await set(doc, {})).toEqual({ author: 'Grace', pages: 1 });
  });

  it('answers NOT_FOUND for an unknown document', async () => {
    expect(await adminError(set(NOWHERE, { author: 'x' }))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
    });
  });
});
