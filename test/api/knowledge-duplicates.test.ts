// POST /api/v1/knowledge/{id}/documents with content the knowledge base already holds: refused with
// a 409 naming the document (found by the SHA-256 of the bytes, whatever the name), unless the
// upload sends allowDuplicate=true; two racing uploads of one content let one in; content of a
// deleted or failed document, or in another knowledge base, is new.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { expectError, expectOk, localBlobs, type Part, upload } from './files-helpers.ts';
import { createKnowledgeBase, prose, settled, uploadDocument } from './knowledge-helpers.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

async function freshBase() {
  const workspaceId = await createWorkspace(svc.admin, tenant);
  const kb = await createKnowledgeBase(svc, workspaceId);
  return { workspaceId, kbId: kb.id as string };
}

/** An upload with the allowDuplicate field (before the file, or after it with `fileFirst`). */
function uploadWith(
  kbId: string,
  o: { workspaceId: string; name: string; content: string; allowDuplicate?: string; fileFirst?: boolean },
): Promise<ApiResponse> {
  const file: Part = { file: 'file', name: o.name, type: 'text/plain', content: Buffer.from(o.content) };
  const fields: Part[] = [
    { field: 'workspaceId', value: o.workspaceId },
    ...(o.allowDuplicate === undefined ? [] : [{ field: 'allowDuplicate', value: o.allowDuplicate }]),
  ];
  const parts = o.fileFirst ? [file, ...fields] : [...fields, file];
  return upload(svc, tenant.key, { parts }, `/api/v1/knowledge/${kbId}/documents`);
}

async function documentCount(kbId: string): Promise<number> {
  const [row] = await svc.db.query<{ n: number | string }>(
    'select count(*) as n from knowledge_documents where knowledge_base_id = $1',
    [kbId],
  );
  return Number(row?.n);
}

const refusal = (id: string, filename: string) =>
  `This knowledge base already holds the same content: document ${id} ("${filename}"). ` +
  'Send the field allowDuplicate=true to upload it anyway';

describe('the same content twice in one knowledge base', () => {
  it('is refused with 409 naming the document, whatever the name and field order; nothing is kept', async () => {
    const { workspaceId, kbId } = await freshBase();
    const content = prose(2, 'duplicates');
    const first = await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'guide.txt', content });
    expectOk(first);
    const id = first.body.data.document.id;
    const blobs = localBlobs(svc).length;
    for (const [name, fileFirst] of [
      ['guide.txt', false],
      ['copy of guide.txt', false],
      ['renamed.txt', true],
    ] as const) {
      const res = await uploadWith(kbId, { workspaceId, name, content, fileFirst });
      expectError(res, 409);
      expect(res.body).toEqual({ error: refusal(id, 'guide.txt') });
    }
    // allowDuplicate=false is the default said out loud.
    expectError(
      await uploadWith(kbId, { workspaceId, name: 'x.txt', content, allowDuplicate: 'false' }),
      409,
    );
    expect(await documentCount(kbId)).toBe(1);
    expect(localBlobs(svc)).toHaveLength(blobs);
    // Other content is welcome, and so is one byte more.
    expectOk(
      await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'b.txt', content: `${content}.` }),
    );
  });

  it('is accepted with allowDuplicate=true, before or after the file; later copies name the first', async () => {
    const { workspaceId, kbId } = await freshBase();
    const content = 'A note that is wanted twice.';
    const first = await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'a.txt', content });
    for (const fileFirst of [false, true]) {
      const res = await uploadWith(kbId, {
        workspaceId,
        name: 'b.txt',
        content,
        allowDuplicate: 'true',
        fileFirst,
      });
      expectOk(res);
      expect(res.body.data.document.filename).toBe('b.txt');
    }
    expect(await documentCount(kbId)).toBe(3);
    const again = await uploadWith(kbId, { workspaceId, name: 'c.txt', content });
    expect(again.body.error).toBe(refusal(first.body.data.document.id, 'a.txt'));
  });

  it('refuses an allowDuplicate that is not true or false with 400 naming it, storing nothing', async () => {
    const { workspaceId, kbId } = await freshBase();
    const blobs = localBlobs(svc).length;
    for (const value of ['yes', '1', 'TRUE', '']) {
      for (const fileFirst of [false, true]) {
        const res = await uploadWith(kbId, {
          workspaceId,
          name: 'a.txt',
          content: 'x',
          allowDuplicate: value,
          fileFirst,
        });
        expectError(res, 400);
        expect(res.body.details[0].path).toEqual(['allowDuplicate']);
      }
    }
    expect(await documentCount(kbId)).toBe(0);
    expect(localBlobs(svc)).toHaveLength(blobs);
  });

  it('lets exactly one of many racing uploads of one content in; the others keep nothing', async () => {
    const { workspaceId, kbId } = await freshBase();
    const blobs = localBlobs(svc).length;
    const content = prose(3, 'race');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => uploadWith(kbId, { workspaceId, name: `r${i}.txt`, content })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 200)?.body.data.document;
    for (const r of results.filter((r) => r.status === 409)) {
      expect(r.body.error).toBe(refusal(winner.id, winner.filename));
    }
    expect(await documentCount(kbId)).toBe(1);
    expect(localBlobs(svc)).toHaveLength(blobs + 1);
  });

  it('is new content in another knowledge base, once deleted, and when the earlier one failed', async () => {
    const { workspaceId, kbId } = await freshBase();
    const other = await createKnowledgeBase(svc, workspaceId);
    const content = 'Shared between bases.';
    const a = await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'a.txt', content });
    expectOk(a);
    expectOk(await uploadDocument(svc, tenant.key, other.id, { workspaceId, name: 'a.txt', content }));
    // Deleted: its content may come again.
    await svc.admin.knowledge.deleteDocument.mutate({ documentId: a.body.data.document.id });
    expectOk(await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'a.txt', content }));
    // Failed: uploading the same bytes again is how it is retried, as often as it fails. (A pending
    // copy blocks: the racing test; a completed one: the search test. Asserting a pending copy here
    // would race the runner, which fails this document within milliseconds.)
    const broken = { name: 'broken.pdf', type: 'application/pdf', content: '%PDF-1.7\nnot really a pdf' };
    for (let attempt = 0; attempt < 2; attempt++) {
      const upload = await uploadDocument(svc, tenant.key, kbId, { workspaceId, ...broken });
      expectOk(upload);
      expect((await settled(svc, upload.body.data.document.id)).processingStatus).toBe('failed');
    }
    expect(await documentCount(kbId)).toBe(3);
  });

  it('keeps each search hit single', async () => {
    const { workspaceId, kbId } = await freshBase();
    const content = 'The lighthouse keeper logs the passing ships every night.';
    const doc = await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'log.txt', content });
    await settled(svc, doc.body.data.document.id);
    expectError(await uploadDocument(svc, tenant.key, kbId, { workspaceId, name: 'log2.txt', content }), 409);
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kbId], query: 'lighthouse ships' },
    });
    expectOk(res);
    expect(res.body.data.results.map((r: { documentName: string }) => r.documentName)).toEqual(['log.txt']);
  });
});
