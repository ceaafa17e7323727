// Admin: knowledge bases (create, list, get, delete), their typed tags, and their documents (tags,
// enabled, re-process, delete). Documents are uploaded through the public API; a document's or a
// base's stored bytes are removed once its deletion has committed.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import {
  chunkingConfigSchema,
  createKnowledgeBase,
  deleteKnowledgeBase,
  getKnowledgeBase,
  knowledgeDescriptionSchema,
  knowledgeNameSchema,
  listKnowledgeBases,
  requireKnowledgeBase,
} from '../../db/knowledge/bases.ts';
import {
  DOCUMENT_SORTS,
  deleteDocument,
  getDocument,
  listDocuments,
  reprocessDocument,
  setDocumentEnabled,
} from '../../db/knowledge/documents.ts';
import { defineTag, listTags, setDocumentTags, TAG_TYPES } from '../../db/knowledge/tags.ts';
import { invalidField } from '../../errors.ts';
import { sendIngestJobs } from '../../jobs/ingest-jobs.ts';
import { type AdminContext, procedure, router } from '../trpc.ts';

const byId = z.object({ id: z.uuid() });
const byDocument = z.object({ documentId: z.uuid() });

/** Removes stored bytes whose records are gone; a failure is logged, never the caller's problem. */
async function removeBytes(ctx: AdminContext, keys: string[]) {
  for (const key of keys) {
    await ctx.storage.delete(key).catch((err: unknown) => {
      ctx.log.error('could not delete the bytes of a deleted document', { key, err });
    });
  }
}

export const knowledgeRouter = router({
  create: procedure
    .meta({ description: 'Create a knowledge base in a workspace (its embedding model is chosen for good)' })
    .input(
      z.object({
        workspaceId: z.uuid(),
        name: knowledgeNameSchema,
        description: knowledgeDescriptionSchema.optional(),
        chunkingConfig: chunkingConfigSchema.optional(),
        embeddingModel: z.string().min(1).max(200).optional(),
      }),
    )
    .mutation(({ ctx, input }) => {
      const embeddingModel = input.embeddingModel ?? ctx.embedders.defaultModel;
      if (!ctx.embedders.models.includes(embeddingModel)) {
        throw invalidField(
          'embeddingModel',
          `This service embeds with ${ctx.embedders.models.join(' or ')}; ${embeddingModel} is not configured`,
        );
      }
      return createKnowledgeBase(ctx.db, ADMIN_ACTOR, { ...input, embeddingModel });
    }),
  list: procedure
    .meta({ description: "List a workspace's knowledge bases" })
    .input(z.object({ workspaceId: z.uuid() }))
    .query(({ ctx, input }) => listKnowledgeBases(ctx.db, input.workspaceId)),
  get: procedure
    .meta({ description: 'Show a knowledge base with its tag definitions' })
    .input(byId)
    .query(async ({ ctx, input }) => {
      const knowledgeBase = await getKnowledgeBase(ctx.db, { id: input.id });
      // listTags answers a Map by base, which JSON (tRPC's wire) would turn into {}.
      const tags = (await listTags(ctx.db, [input.id])).get(input.id) ?? [];
      return { ...knowledgeBase, tags };
    }),
  delete: procedure
    .meta({ description: 'Delete a knowledge base with its documents, chunks and stored bytes' })
    .input(byId)
    .mutation(async ({ ctx, input }) => {
      const { storageKeys } = await deleteKnowledgeBase(ctx.db, ADMIN_ACTOR, input.id);
      await removeBytes(ctx, storageKeys);
      return { id: input.id, deletedDocuments: storageKeys.length };
    }),
  defineTag: procedure
    .meta({ description: 'Define a typed tag (text, number, date, boolean) on a knowledge base' })
    .input(z.object({ knowledgeBaseId: z.uuid(), name: z.string(), type: z.enum(TAG_TYPES) }))
    .mutation(({ ctx, input }) => defineTag(ctx.db, ADMIN_ACTOR, input)),
  documents: procedure
    .meta({ description: "List a knowledge base's documents with their processing status" })
    .input(
      z.object({
        knowledgeBaseId: z.uuid(),
        limit: z.number().int().min(1).max(100).default(50),
        offset: z.number().int().min(0).default(0),
        search: z.string().max(255).optional(),
        enabledFilter: z.enum(['all', 'enabled', 'disabled']).default('all'),
        sortBy: z.enum(DOCUMENT_SORTS).default('uploadedAt'),
        sortOrder: z.enum(['asc', 'desc']).default('desc'),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { knowledgeBaseId, ...query } = input;
      await requireKnowledgeBase(ctx.db, { id: knowledgeBaseId });
      return listDocuments(ctx.db, knowledgeBaseId, query);
    }),
  getDocument: procedure
    .meta({ description: 'Show one document of a knowledge base' })
    .input(byDocument)
    .query(({ ctx, input }) => getDocument(ctx.db, { id: input.documentId })),
  setDocumentTags: procedure
    .meta({ description: "Set a document's tag values (null clears one)" })
    .input(
      byDocument.extend({
        tags: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
      }),
    )
    .mutation(({ ctx, input }) => setDocumentTags(ctx.db, ADMIN_ACTOR, input)),
  setDocumentEnabled: procedure
    .meta({ description: 'Enable or disable a document: disabled documents are not searched' })
    .input(byDocument.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) => setDocumentEnabled(ctx.db, ADMIN_ACTOR, input)),
  reprocessDocument: procedure
    .meta({ description: 'Parse, chunk and embed a document again' })
    .input(byDocument)
    .mutation(({ ctx, input }) =>
      ctx.db.transaction(async (tx) => {
        const { document, job } = await reprocessDocument(tx, ADMIN_ACTOR, input.documentId);
        await sendIngestJobs(ctx.queue, tx, [job]);
        return document;
      }),
    ),
  deleteDocument: procedure
    .meta({ description: 'Delete a document with its chunks and stored bytes' })
    .input(byDocument)
    .mutation(async ({ ctx, input }) => {
      const { storageKey } = await deleteDocument(ctx.db, ADMIN_ACTOR, input.documentId);
      await removeBytes(ctx, [storageKey]);
      return { documentId: input.documentId };
    }),
});
