// The `knowledge` block: searches knowledge bases of the execution's workspace, with the same rules
// (and so the same errors) as POST /api/v1/knowledge/search.
//   knowledgeBaseIds (or knowledgeBaseId), query?, tagFilters?, topK? (default 10), searchMode?,
//   scoreThreshold?, rerank? ({model, topN?}: RERANK_BASE_URL; a failing rerank server fails the block)
//   → {results: [{documentId, documentName, content, chunkIndex, similarity, score, metadata}], totalResults}
// Any field may be a reference (`<start.question>`), checked once resolved.
import { z } from 'zod';
import { knowledgeSearchRequest, searchKnowledge } from '../../db/knowledge/search.ts';
import { ServiceError } from '../../errors.ts';
import { rerankResults } from '../embeddings/rerank.ts';
import { lostDatabase } from '../executor/abandon.ts';
import { type BlockType, describeServiceError } from './block.ts';

const schema = z
  .object({
    knowledgeBaseIds: z.unknown().optional(),
    knowledgeBaseId: z.unknown().optional(),
    query: z.unknown().optional(),
    tagFilters: z.unknown().optional(),
    topK: z.unknown().optional(),
    searchMode: z.unknown().optional(),
    scoreThreshold: z.unknown().optional(),
    rerank: z.unknown().optional(),
  })
  .strict()
  .refine((c) => (c.knowledgeBaseIds === undefined) !== (c.knowledgeBaseId === undefined), {
    path: ['knowledgeBaseIds'],
    message: 'Give knowledgeBaseIds (a list) or knowledgeBaseId (one), not both',
  })
  .refine((c) => c.query !== undefined || c.tagFilters !== undefined, {
    path: ['query'],
    message: 'Give a query, tagFilters, or both',
  });

export type KnowledgeConfig = z.infer<typeof schema>;

export const knowledgeBlock: BlockType<KnowledgeConfig> = {
  type: 'knowledge',
  schema,
  async run(config, ctx) {
    const { knowledgeBaseId, ...rest } = config;
    const parsed = knowledgeSearchRequest.safeParse({
      ...rest,
      knowledgeBaseIds: config.knowledgeBaseIds ?? [knowledgeBaseId],
      workspaceId: ctx.workspaceId,
    });
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new Error(`Invalid knowledge search: ${issues.join('; ')}`);
    }
    // The query's embedding and the reranking go to model servers, whose refusals look like a lost
    // database's: a failure there is the block's.
    let outside = false;
    try {
      const found = await searchKnowledge(
        ctx.db,
        (model, query) =>
          ctx.embedders
            .get(model)
            .embedQuery(query)
            .catch((err: unknown) => {
              outside = true;
              throw err;
            }),
        ctx.workspaceId,
        parsed.data,
      );
      outside = true;
      const { rerank } = parsed.data;
      const results = rerank
        ? await rerankResults(ctx.embedders.reranker, rerank, found.query, found.results)
        : found.results;
      return { output: { results, totalResults: results.length } };
    } catch (err) {
      if (err instanceof ServiceError) throw new Error(describeServiceError(err));
      // Failed in the search's statements: our database's.
      throw outside ? err : lostDatabase(err);
    }
  },
};
