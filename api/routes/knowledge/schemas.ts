// The requests and answers of the knowledge base operations: list (4), update (5) and search (6).
// The document operations' are in document-schemas.ts.
import { z } from 'zod';
import {
  chunkingConfigPatchSchema,
  chunkingConfigSchema,
  type KnowledgeBase,
  knowledgeDescriptionSchema,
  knowledgeNameSchema,
} from '../../../db/knowledge/bases.ts';
import { knowledgeSearchRequest, type SearchResultItem } from '../../../db/knowledge/search.ts';
import { EX, envelope } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';

/** The workspaceId every knowledge request names (in the query or the body). */
export const WORKSPACE = { description: 'The workspace of the knowledge base', example: EX.workspaceId };

/** `{id}`: a 400 names it knowledgeBaseId, the field a client knows it by. */
export const knowledgeBaseParams = z.object({
  id: uuidParam('The knowledge base id', EX.knowledgeBaseId, 'knowledgeBaseId'),
});

// --- Requests -------------------------------------------------------------------------------------

export const listKnowledgeQuery = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

export const updateKnowledgeBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    name: knowledgeNameSchema.optional(),
    description: knowledgeDescriptionSchema.optional(),
    chunkingConfig: chunkingConfigPatchSchema.optional().meta({
      description:
        'Any of maxSize (100–4000 tokens), minSize (1–2000 characters), overlap (0–500 tokens, below maxSize), ' +
        'merged into the current config. A changed config processes every document again; searches answer ' +
        'from the old chunks until the new ones are in.',
    }),
  })
  .refine((b) => b.name !== undefined || b.description !== undefined || b.chunkingConfig !== undefined, {
    path: ['name'],
    message: 'Give at least one of name, description and chunkingConfig',
  });

// The store's search request (shared with the knowledge block) refines the whole object, which
// withFieldDocs' extend refuses; safeExtend documents a copy and keeps that refinement.
const search = knowledgeSearchRequest.shape;
export const searchKnowledgeBody = knowledgeSearchRequest.safeExtend({
  workspaceId: search.workspaceId.meta(WORKSPACE),
  knowledgeBaseIds: search.knowledgeBaseIds.meta({ description: '1 to 20 knowledge bases of the workspace' }),
  query: search.query.meta({ description: 'Text to search for by meaning; give query, tagFilters or both' }),
  tagFilters: search.tagFilters.meta({
    description:
      'All must hold. text: eq neq contains not_contains starts_with ends_with (any case); number and ' +
      'date: eq neq gt gte lt lte between (inclusive, with valueTo); boolean: eq neq',
  }),
  topK: search.topK.meta({ description: 'Results wanted' }),
  searchMode: search.searchMode.meta({
    description:
      '`vector`: by similarity. `hybrid` adds full-text ranking, fused with the vector ranking by reciprocal rank: ' +
      'results then come in `score` order, and their `similarity` values need not be in order. `fulltext`: by ' +
      'full-text rank alone (English stemming; quoted phrases, `or` and `-word` as in web search)',
  }),
  scoreThreshold: search.scoreThreshold.meta({
    description:
      'The least `similarity` (0–1) a result may have; lower ones are dropped after ranking, so fewer than topK may come back',
  }),
  rerank: search.rerank.meta({
    description:
      "Reorder the results with the configured rerank server's `/rerank` (RERANK_BASE_URL): `model` is passed on, " +
      'the best `topN` (default: all) are kept, and each `score` becomes its relevance score. Needs a query; ' +
      'a 400 when no rerank server is configured, a 502 when it fails or answers too late (RERANK_TIMEOUT_MS)',
  }),
});

// --- Answers --------------------------------------------------------------------------------------

const chunkingConfig = z
  .object({
    maxSize: z.number().int().meta({ description: 'Tokens per chunk at most (100–4000)' }),
    minSize: z.number().int().meta({ description: 'Characters per chunk at least (1–2000)' }),
    overlap: z
      .number()
      .int()
      .meta({ description: 'Tokens neighbouring chunks share (0–500, below maxSize)' }),
  })
  .meta({ id: 'ChunkingConfig' });

export const knowledgeBaseSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    docCount: z.number().int(),
    tokenCount: z.number().int(),
    embeddingModel: z.string().meta({ description: 'Chosen at creation for good' }),
    chunkingConfig,
    workspaceId: z.uuid(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeBase' }) satisfies z.ZodType<KnowledgeBase>;

export const knowledgeBaseList = envelope({
  knowledgeBases: z.array(knowledgeBaseSchema),
  totalCount: z.number().int(),
}).meta({ id: 'KnowledgeBaseList' });

export const knowledgeBaseUpdated = envelope({
  knowledgeBase: knowledgeBaseSchema,
  message: z.string(),
}).meta({
  id: 'KnowledgeBaseUpdated',
});

const searchResultSchema = z
  .object({
    documentId: z.uuid(),
    documentName: z.string(),
    content: z.string().meta({ description: 'The text of the matching chunk' }),
    chunkIndex: z.number().int(),
    similarity: z.number().meta({
      description:
        "How close the chunk's meaning is to the query: 1 − cosine distance between their embeddings (up to 1), " +
        'in every mode; 1 for a search by tags alone. In hybrid mode the results are not ordered by it: see score.',
    }),
    score: z.number().meta({
      description:
        'What the results are ordered by, highest first. Vector mode and a search by tags alone: equal to ' +
        'similarity. Hybrid mode: the reciprocal rank fusion score, the sum over the vector ranking and the ' +
        'full-text ranking of 1 / (60 + rank) (rank 1 is the best; a list the chunk is not in adds nothing), so ' +
        'at most 2/61 ≈ 0.0328; it compares results of one answer, not of two searches. Fulltext mode: the ' +
        "full-text rank (ts_rank_cd). Reranked: the rerank server's relevance score.",
    }),
    metadata: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .meta({ description: "The document's tag values by tag name" }),
  })
  .meta({ id: 'SearchResult' }) satisfies z.ZodType<SearchResultItem>;

export const searchResults = envelope({
  results: z.array(searchResultSchema),
  query: z.string().meta({ description: "The trimmed query; '' for a search by tags alone" }),
  knowledgeBaseIds: z.array(z.uuid()),
  topK: z.number().int(),
  totalResults: z.number().int(),
}).meta({ id: 'SearchResults' });

// --- Create, get, delete a knowledge base -------------------------------------------------------

export const createKnowledgeBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  name: knowledgeNameSchema,
  description: knowledgeDescriptionSchema.optional(),
  chunkingConfig: chunkingConfigSchema.optional().meta({
    description:
      'maxSize (100–4000 tokens), minSize (1–2000 characters), overlap (0–500 tokens, below maxSize); ' +
      'the default is {maxSize: 1024, minSize: 100, overlap: 200}',
  }),
  embeddingModel: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'One of the models this service embeds with; the default model when left out' }),
});

/** A write naming only its workspace (the delete's body). */
export const workspaceOnlyBody = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

export const knowledgeBaseCreated = envelope({
  knowledgeBase: knowledgeBaseSchema,
  message: z.string(),
}).meta({ id: 'KnowledgeBaseCreated' });

export const knowledgeBaseFound = envelope({ knowledgeBase: knowledgeBaseSchema }).meta({
  id: 'KnowledgeBaseFound',
});

export const knowledgeBaseDeleted = envelope({
  id: z.uuid(),
  deletedDocuments: z.number().int().meta({
    description: 'Documents deleted with it; their stored bytes are released from the storage quota',
  }),
  message: z.string(),
}).meta({ id: 'KnowledgeBaseDeleted' });
