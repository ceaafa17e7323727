// What the knowledge tests share: their preamble (a service with its runner, tenants, a workspace
// and knowledge base of each test's own), a knowledge base made through the admin plane, document
// uploads through the public API, and waiting for the runner to finish processing them.
import { expect } from 'vitest';
import type { PlanName } from '../../db/plans.ts';
import { type ApiResponse, createWorkspace, type Tenant, type TestService } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { type Content, upload, uploadParts } from './files-helpers.ts';

/** Paragraphs of distinct words: a document of several chunks at small chunk sizes. */
export function prose(paragraphs: number, seed = 'topic'): string {
  return Array.from(
    { length: paragraphs },
    (_, i) =>
      `Paragraph ${i} about ${seed} ${i}. ` +
      'The quick brown fox jumps over the lazy dog while the committee reviews the annual budget. '.repeat(6),
  ).join('\n\n');
}

export interface KnowledgeBaseOptions {
  name?: string;
  chunkingConfig?: { maxSize: number; minSize: number; overlap: number };
}

export async function createKnowledgeBase(
  svc: TestService,
  workspaceId: string,
  o: KnowledgeBaseOptions = {},
) {
  return svc.admin.knowledge.create.mutate({
    workspaceId,
    name: o.name ?? `kb ${Math.random().toString(36).slice(2, 8)}`,
    ...(o.chunkingConfig ? { chunkingConfig: o.chunkingConfig } : {}),
  });
}

export interface DocumentUpload {
  workspaceId: string;
  name?: string;
  content?: Content | string;
  type?: string | null;
  order?: 'fieldsFirst' | 'fileFirst';
  /** Sends allowDuplicate=true (before the file): the same content again on purpose. */
  allowDuplicate?: boolean;
}

/** POST /api/v1/knowledge/{id}/documents. */
export function uploadDocument(
  svc: TestService,
  key: string,
  knowledgeBaseId: string,
  o: DocumentUpload,
): Promise<ApiResponse> {
  const content =
    typeof o.content === 'string' ? Buffer.from(o.content) : (o.content ?? Buffer.from('hello'));
  const options = {
    workspaceId: o.workspaceId,
    name: o.name ?? 'notes.txt',
    content,
    type: o.type === undefined ? 'text/plain' : o.type,
    ...(o.order ? { order: o.order } : {}),
  };
  const parts = o.allowDuplicate
    ? [{ field: 'allowDuplicate', value: 'true' }, ...uploadParts(options)]
    : undefined;
  return upload(
    svc,
    key,
    { ...options, ...(parts ? { parts } : {}) },
    `/api/v1/knowledge/${knowledgeBaseId}/documents`,
  );
}

export interface DocumentRecord {
  id: string;
  filename: string;
  processingStatus: string;
  processingError: string | null;
  chunkCount: number;
  tokenCount: number;
  enabled: boolean;
  fileSize: number;
}

/** The document as the admin plane reads it. */
export async function documentOf(svc: TestService, documentId: string): Promise<DocumentRecord> {
  return (await svc.admin.knowledge.getDocument.query({ documentId })) as DocumentRecord;
}

/** Polls until the document is completed or failed (the runner works in this process). */
export async function settled(
  svc: TestService,
  documentId: string,
  timeoutMs = 30_000,
): Promise<DocumentRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const doc = await documentOf(svc, documentId);
    if (doc.processingStatus === 'completed' || doc.processingStatus === 'failed') return doc;
    if (Date.now() > deadline) throw new Error(`document ${documentId} still ${doc.processingStatus}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Uploads a document and waits for it to be processed; answers the settled document. */
export async function ingest(
  svc: TestService,
  key: string,
  knowledgeBaseId: string,
  o: DocumentUpload,
): Promise<DocumentRecord> {
  const res = await uploadDocument(svc, key, knowledgeBaseId, o);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return settled(svc, res.body.data.document.id);
}

/** Where a test's knowledge base goes: a workspace of its own unless `workspaceId` names one. */
export type FreshBaseOptions = KnowledgeBaseOptions & { workspaceId?: string };

/**
 * The knowledge test files' preamble: a service with a runner in process and two tenants on `plan`
 * (useService), and what their tests start with: a workspace, or a knowledge base in one (with a
 * processed document in it), of the test's own, so names and counts do not meet.
 */
export function useKnowledgeService(plan: PlanName = 'enterprise') {
  const { svc, tenant, other } = useService({ runner: true, plan });
  const freshWorkspace = (t: Tenant = tenant) => createWorkspace(svc.admin, t);
  async function freshBase(o: FreshBaseOptions = {}) {
    const { workspaceId = await freshWorkspace(), ...options } = o;
    return { workspaceId, kb: await createKnowledgeBase(svc, workspaceId, options) };
  }
  /** A fresh base with a document of `paragraphs` of prose uploaded by `key` and processed. */
  async function freshBaseWithDocument(paragraphs: number, o: FreshBaseOptions & { key?: string } = {}) {
    const { key = tenant.key, ...where } = o;
    const { workspaceId, kb } = await freshBase(where);
    const doc = await ingest(svc, key, kb.id, { workspaceId, content: prose(paragraphs) });
    return { workspaceId, kb, doc };
  }
  return { svc, tenant, other, freshWorkspace, freshBase, freshBaseWithDocument };
}
