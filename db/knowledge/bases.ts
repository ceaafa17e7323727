// Knowledge bases: a workspace's collections of documents to search, with the chunking rules their
// documents are processed by and the embedding model they are searched with. A change of the
// chunking rules asks every document for a new generation of chunks (db/knowledge/documents.ts);
// the caller sends the ingestion jobs this store answers, in the same transaction.
import { z } from 'zod';
import { invalidField, notFound } from '../../errors.ts';
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { isPlainName } from '../folders.ts';
import { isUuid } from '../ids.ts';
import { isStorableText } from '../tables/values.ts';

export interface ChunkingConfig {
  /** Tokens per chunk at most (cl100k). */
  maxSize: number;
  /** Characters per chunk at least: shorter pieces join a neighbour. */
  minSize: number;
  /** Tokens neighbouring chunks share. */
  overlap: number;
}

export const DEFAULT_CHUNKING_CONFIG: ChunkingConfig = { maxSize: 1024, minSize: 100, overlap: 200 };

/** A knowledge base as the API shows it. */
export interface KnowledgeBase {
  id: string;
  name: string;
  description: string;
  docCount: number;
  tokenCount: number;
  embeddingModel: string;
  chunkingConfig: ChunkingConfig;
  workspaceId: string;
  createdAt: string;
  updatedAt: string;
}

/** One document's next ingestion: the generation of chunks it is to produce. */
export interface IngestJob {
  documentId: string;
  generation: number;
}

export const knowledgeNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine(isPlainName, 'No control characters, not blank');
// Postgres text holds no NUL and no lone surrogate: refused as a 400 rather than failing as a 500.
export const knowledgeDescriptionSchema = z.string().max(2000).refine(isStorableText, 'Not storable text');

const maxSize = z.number().int().min(100).max(4000);
const minSize = z.number().int().min(1).max(2000);
const overlap = z.number().int().min(0).max(500);

/** Every field of a chunking config; overlap below maxSize. */
export const chunkingConfigSchema = z
  .strictObject({ maxSize, minSize, overlap })
  .refine((c) => c.overlap < c.maxSize, { path: ['overlap'], message: 'Must be less than maxSize' });

/** Some fields of a chunking config, merged into the current one (and checked whole then). */
export const chunkingConfigPatchSchema = z
  .strictObject({ maxSize: maxSize.optional(), minSize: minSize.optional(), overlap: overlap.optional() })
  .refine((c) => Object.keys(c).length > 0, 'Give at least one of maxSize, minSize and overlap');

type KnowledgeBaseRow = {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  chunk_max_tokens: number;
  chunk_min_chars: number;
  chunk_overlap_tokens: number;
  embedding_model: string;
  created_at: Date;
  updated_at: Date;
  doc_count: number | string;
  token_count: number | string;
};

// A knowledge base with its document figures.
const SELECT_KNOWLEDGE_BASE = `select k.*,
    (select count(*) from knowledge_documents d where d.knowledge_base_id = k.id) as doc_count,
    (select coalesce(sum(d.token_count), 0) from knowledge_documents d where d.knowledge_base_id = k.id)
      as token_count
  from knowledge_bases k`;

const toKnowledgeBase = (r: KnowledgeBaseRow): KnowledgeBase => ({
  id: r.id,
  name: r.name,
  description: r.description,
  docCount: Number(r.doc_count),
  tokenCount: Number(r.token_count),
  embeddingModel: r.embedding_model,
  chunkingConfig: {
    maxSize: r.chunk_max_tokens,
    minSize: r.chunk_min_chars,
    overlap: r.chunk_overlap_tokens,
  },
  workspaceId: r.workspace_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

async function organizationOf(db: Queryable, workspaceId: string): Promise<string> {
  const [ws] = await db.query<{ organization_id: string }>(
    'select organization_id from workspaces where id = $1',
    [workspaceId],
  );
  if (!ws) throw notFound('Workspace');
  return ws.organization_id;
}

export async function createKnowledgeBase(
  db: Queryable,
  actor: Actor,
  input: {
    workspaceId: string;
    name: string;
    description?: string;
    chunkingConfig?: ChunkingConfig;
    embeddingModel: string;
  },
): Promise<KnowledgeBase> {
  const chunking = input.chunkingConfig ?? DEFAULT_CHUNKING_CONFIG;
  return db.transaction(async (tx) => {
    const organizationId = await organizationOf(tx, input.workspaceId);
    const [row] = await tx.query<KnowledgeBaseRow>(
      `insert into knowledge_bases (workspace_id, name, description, chunk_max_tokens, chunk_min_chars,
         chunk_overlap_tokens, embedding_model, created_by)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning *, 0 as doc_count, 0 as token_count`,
      [
        input.workspaceId,
        input.name,
        input.description ?? '',
        chunking.maxSize,
        chunking.minSize,
        chunking.overlap,
        input.embeddingModel,
        actor.userId,
      ],
    );
    const kb = toKnowledgeBase(row as KnowledgeBaseRow);
    await recordAudit(tx, actor, {
      organizationId,
      workspaceId: input.workspaceId,
      action: 'knowledge.created',
      resourceType: 'knowledge_base',
      resourceId: kb.id,
      metadata: { name: kb.name, embeddingModel: kb.embeddingModel, chunkingConfig: kb.chunkingConfig },
    });
    return kb;
  });
}

/** The workspace's knowledge bases, oldest first. */
export async function listKnowledgeBases(db: Queryable, workspaceId: string): Promise<KnowledgeBase[]> {
  const rows = await db.query<KnowledgeBaseRow>(
    `${SELECT_KNOWLEDGE_BASE} where k.workspace_id = $1 order by k.created_at, k.id`,
    [workspaceId],
  );
  return rows.map(toKnowledgeBase);
}

/** The knowledge base, or 404 when it is not in that workspace (or the id is not a UUID). */
export async function getKnowledgeBase(
  db: Queryable,
  ref: { id: string; workspaceId?: string },
): Promise<KnowledgeBase> {
  if (!isUuid(ref.id)) throw notFound('Knowledge base');
  const [row] = await db.query<KnowledgeBaseRow>(
    `${SELECT_KNOWLEDGE_BASE} where k.id = $1 and ($2::uuid is null or k.workspace_id = $2)`,
    [ref.id, ref.workspaceId ?? null],
  );
  if (!row) throw notFound('Knowledge base');
  return toKnowledgeBase(row);
}

/** 404 unless the knowledge base exists (in that workspace, when one is given); no figures read. */
export async function requireKnowledgeBase(
  db: Queryable,
  ref: { id: string; workspaceId?: string },
): Promise<void> {
  const [row] = isUuid(ref.id)
    ? await db.query(
        'select 1 from knowledge_bases where id = $1 and ($2::uuid is null or workspace_id = $2)',
        [ref.id, ref.workspaceId ?? null],
      )
    : [];
  if (!row) throw notFound('Knowledge base');
}

export interface KnowledgeBaseChanges {
  name?: string;
  description?: string;
  chunkingConfig?: Partial<ChunkingConfig>;
}

/**
 * Changes a knowledge base; a chunking config that really changes asks every document for a new
 * generation of chunks and answers the jobs to send (their old chunks answer searches meanwhile).
 */
export async function updateKnowledgeBase(
  db: Queryable,
  actor: Actor,
  ref: { id: string; workspaceId: string },
  changes: KnowledgeBaseChanges,
): Promise<{ knowledgeBase: KnowledgeBase; jobs: IngestJob[] }> {
  return db.transaction(async (tx) => {
    const current = await getKnowledgeBase(tx, ref);
    await tx.query('select 1 from knowledge_bases where id = $1 for update', [ref.id]);
    const chunking = { ...current.chunkingConfig, ...changes.chunkingConfig };
    const checked = chunkingConfigSchema.safeParse(chunking);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw invalidField(
        `chunkingConfig.${String(issue?.path[0] ?? 'overlap')}`,
        issue?.message ?? 'Invalid',
      );
    }
    const rechunk =
      chunking.maxSize !== current.chunkingConfig.maxSize ||
      chunking.minSize !== current.chunkingConfig.minSize ||
      chunking.overlap !== current.chunkingConfig.overlap;
    // clock_timestamp: a new updatedAt even for a change within the transaction that created it.
    await tx.query(
      `update knowledge_bases set name = $2, description = $3, chunk_max_tokens = $4, chunk_min_chars = $5,
         chunk_overlap_tokens = $6, updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
        where id = $1`,
      [
        ref.id,
        changes.name ?? current.name,
        changes.description ?? current.description,
        chunking.maxSize,
        chunking.minSize,
        chunking.overlap,
      ],
    );
    const jobs = rechunk
      ? await tx.query<IngestJob>(
          `update knowledge_documents
              set target_generation = target_generation + 1, processing_status = 'pending',
                  processing_error = null, attempts = 0
            where knowledge_base_id = $1
        returning id as "documentId", target_generation as generation`,
          [ref.id],
        )
      : [];
    const knowledgeBase = await getKnowledgeBase(tx, ref);
    await recordAudit(tx, actor, {
      organizationId: await organizationOf(tx, ref.workspaceId),
      workspaceId: ref.workspaceId,
      action: 'knowledge.updated',
      resourceType: 'knowledge_base',
      resourceId: ref.id,
      metadata: { changes, reprocessedDocuments: jobs.length },
    });
    return { knowledgeBase, jobs };
  });
}

/**
 * Deletes a knowledge base with its documents and chunks (404 when it is not in `workspaceId`, when
 * one is given); answers the storage keys of its documents, whose bytes the caller removes once this
 * has committed.
 */
export async function deleteKnowledgeBase(
  db: Queryable,
  actor: Actor,
  id: string,
  workspaceId?: string,
): Promise<{ storageKeys: string[] }> {
  return db.transaction(async (tx) => {
    const kb = await getKnowledgeBase(tx, workspaceId ? { id, workspaceId } : { id });
    const keys = await tx.query<{ storage_key: string }>(
      'select storage_key from knowledge_documents where knowledge_base_id = $1',
      [id],
    );
    await tx.query('delete from knowledge_bases where id = $1', [id]);
    await recordAudit(tx, actor, {
      organizationId: await organizationOf(tx, kb.workspaceId),
      workspaceId: kb.workspaceId,
      action: 'knowledge.deleted',
      resourceType: 'knowledge_base',
      resourceId: id,
      metadata: { name: kb.name, documents: keys.length },
    });
    return { storageKeys: keys.map((k) => k.storage_key) };
  });
}
